// client/strata/options.cpp — parsing the strata command line into Options.
#include "options.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace strata::client {

bool Sampling::any() const {
    return temperature || top_p || min_p || repeat_penalty || top_k || max_tokens || seed || !stop.empty() || speculative;
}

namespace {

// Parses the whole of `text` as a T with std::from_chars; throws UsageError otherwise.
template <typename T>
T parse_number(const std::string& option, const std::string& text, const char* what) {
    T value{};
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    bool ok = ec == std::errc() && ptr == end && !text.empty();
    if constexpr (std::is_floating_point_v<T>) ok = ok && std::isfinite(value);
    if (!ok) throw UsageError(option + ": '" + text + "' is not " + what);
    return value;
}

template <std::optional<double> Sampling::*field>
void set_real(Options& o, const std::string& option, const std::string& value) {
    o.sampling.*field = parse_number<double>(option, value, "a number");
}

template <std::optional<int64_t> Sampling::*field>
void set_integer(Options& o, const std::string& option, const std::string& value) {
    o.sampling.*field = parse_number<int64_t>(option, value, "an integer");
}

struct Spec {
    const char* long_name;
    char short_name;   // 0: none
    bool takes_value;
    void (*apply)(Options& o, const std::string& option, const std::string& value);
};

constexpr std::array kSpecs = {
    Spec{"session", 's', true, [](Options& o, const std::string&, const std::string& v) { o.session = v; }},
    Spec{"socket", 0, true, [](Options& o, const std::string&, const std::string& v) { o.socket = v; }},
    Spec{"system", 0, true, [](Options& o, const std::string&, const std::string& v) { o.system = v; }},
    Spec{"raw", 0, false, [](Options& o, const std::string&, const std::string&) { o.raw = true; }},
    Spec{"show-reasoning", 0, false, [](Options& o, const std::string&, const std::string&) { o.show_reasoning = true; }},
    Spec{"encoding", 0, true,
         [](Options& o, const std::string& n, const std::string& v) {
             if (v == "utf-8" || v == "utf8") o.encoding = Encoding::Utf8;
             else if (v == "latin1" || v == "latin-1" || v == "iso-8859-1") o.encoding = Encoding::Latin1;
             else if (v == "replace") o.encoding = Encoding::Replace;
             else throw UsageError(n + " expects utf-8, latin1 or replace, got '" + v + "'");
         }},
    Spec{"json", 0, false, [](Options& o, const std::string&, const std::string&) { o.json = true; }},
    Spec{"verbose", 'v', false, [](Options& o, const std::string&, const std::string&) { o.verbose = true; }},
    Spec{"help", 'h', false, [](Options& o, const std::string&, const std::string&) { o.command = Command::Help; }},
    Spec{"version", 0, false, [](Options& o, const std::string&, const std::string&) { o.command = Command::Version; }},
    Spec{"temperature", 0, true, set_real<&Sampling::temperature>},
    Spec{"top-p", 0, true, set_real<&Sampling::top_p>},
    Spec{"min-p", 0, true, set_real<&Sampling::min_p>},
    Spec{"repeat-penalty", 0, true, set_real<&Sampling::repeat_penalty>},
    Spec{"top-k", 0, true, set_integer<&Sampling::top_k>},
    Spec{"max-tokens", 'n', true, set_integer<&Sampling::max_tokens>},
    Spec{"seed", 0, true,
         [](Options& o, const std::string& n, const std::string& v) {
             o.sampling.seed = parse_number<uint64_t>(n, v, "an unsigned integer");
         }},
    Spec{"timeout", 0, true,
         [](Options& o, const std::string& n, const std::string& v) {
             const double seconds = parse_number<double>(n, v, "a number of seconds");
             if (seconds <= 0) throw UsageError(n + " must be more than 0 seconds, got '" + v + "'");
             o.timeout = seconds;
         }},
    Spec{"stop", 0, true, [](Options& o, const std::string&, const std::string& v) { o.sampling.stop.push_back(v); }},
    Spec{"speculative", 0, true,
         [](Options& o, const std::string& n, const std::string& v) {
             if (v != "off" && v != "ngram" && v != "draft" && v != "auto")
                 throw UsageError(n + " must be off, ngram, draft or auto, got '" + v + "'");
             o.sampling.speculative = v;
         }},
};

const Spec& find_long(const std::string& name, const std::string& arg) {
    for (const Spec& s : kSpecs)
        if (name == s.long_name) return s;
    throw UsageError("unknown option " + arg);
}

const Spec& find_short(char c, const std::string& arg) {
    for (const Spec& s : kSpecs)
        if (s.short_name != 0 && c == s.short_name) return s;
    throw UsageError("unknown option " + arg);
}

// Applies the option at args[i] (advancing i past its value when it takes the next argument).
void apply_option(Options& o, const std::vector<std::string>& args, size_t& i) {
    const std::string& arg = args[i];
    const bool is_long = arg.rfind("--", 0) == 0;
    std::string name, value;
    bool has_value = false;
    const Spec* spec = nullptr;
    if (is_long) {
        name = arg.substr(2);
        if (auto eq = name.find('='); eq != std::string::npos) {
            value = name.substr(eq + 1);
            name.resize(eq);
            has_value = true;
        }
        spec = &find_long(name, arg);
    } else {
        spec = &find_short(arg[1], arg);
        if (arg.size() > 2) {
            if (!spec->takes_value) throw UsageError("unknown option " + arg);
            value = arg.substr(2);
            has_value = true;
        }
    }
    const std::string option = std::string("--") + spec->long_name;
    if (!spec->takes_value && has_value) throw UsageError(option + " takes no value");
    if (spec->takes_value && !has_value) {
        if (i + 1 >= args.size()) throw UsageError(option + " needs a value");
        value = args[++i];
    }
    spec->apply(o, option, value);
}

struct Positional {
    std::vector<std::string> words;
    size_t literal_from = std::numeric_limits<size_t>::max();  // words from here on followed "--"
};

// Reads the command word and what follows it from the positional arguments.
void apply_positional(Options& o, const Positional& p) {
    const auto& w = p.words;
    const bool has_command_word = !w.empty() && p.literal_from > 0;
    const std::string first = has_command_word ? w[0] : "";
    if (first == "chat" || first == "status" || first == "model") {
        if (w.size() > 1) throw UsageError("'" + first + "' takes no further arguments (got '" + w[1] + "')");
        o.command = first == "chat" ? Command::Chat : first == "status" ? Command::Status : Command::Model;
    } else if (first == "sessions") {
        const std::string sub = w.size() > 1 ? w[1] : "list";
        const size_t want = sub == "list" ? 2 : 3;
        if (sub == "list") o.command = Command::SessionsList;
        else if (sub == "show") o.command = Command::SessionsShow;
        else if (sub == "rm") o.command = Command::SessionsRemove;
        else if (sub == "reset") o.command = Command::SessionsReset;
        else throw UsageError("unknown sessions command '" + sub + "' (list, show, rm, reset)");
        if (want == 3 && w.size() < 3) throw UsageError("sessions " + sub + " needs a session name");
        if (w.size() > want)
            throw UsageError("sessions " + sub + " takes " + (want == 3 ? "one session name" : "no arguments"));
        if (want == 3) o.target = w[2];
    } else {
        o.words = w;
    }
}

// Options that only make sense when something is generated.
void check_generation_only(const Options& o) {
    if (o.command == Command::Generate || o.command == Command::Chat) return;
    if (o.sampling.any()) throw UsageError("sampling options apply only to prompts and chat");
    if (o.timeout) throw UsageError("--timeout applies only to prompts and chat");
    if (o.raw || o.system) throw UsageError("--raw and --system apply only to prompts and chat");
    if (o.session) throw UsageError("-s applies only to prompts and chat (use: strata sessions show NAME)");
}

}  // namespace

Options parse_options(const std::vector<std::string>& args) {
    Options o;
    Positional p;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (p.literal_from != std::numeric_limits<size_t>::max() || a.size() < 2 || a[0] != '-') {
            p.words.push_back(a);
        } else if (a == "--") {
            p.literal_from = p.words.size();
        } else {
            apply_option(o, args, i);
        }
    }
    if (o.command == Command::Help || o.command == Command::Version) return o;
    apply_positional(o, p);
    check_generation_only(o);
    return o;
}

const char* usage_text() {
    return R"(usage: strata [OPTIONS] [PROMPT...]        complete a prompt (words and/or stdin)
       strata chat [OPTIONS]                 interactive chat (Ctrl-D ends, Ctrl-C stops a reply)
       strata status | model                 daemon status, loaded model
       strata sessions [list]                your sessions
       strata sessions show|rm|reset NAME    one session's history; delete it; forget its history

The prompt is the arguments joined by spaces, and/or standard input when it is not a
terminal (both: the arguments, a blank line, then standard input).

options:
  -s, --session NAME       continue (or start) the named session
      --system TEXT        add a system message
      --raw                send a raw prompt even if the model has a chat template
      --show-reasoning     show a reasoning model's thinking (on standard error, faint
                           on a terminal); hidden by default
      --encoding ENC       of the input: utf-8 (default; invalid bytes are an error),
                           latin1, or replace (invalid bytes become U+FFFD)
  -n, --max-tokens N       stop after N tokens
      --temperature T      0 = greedy
      --top-k K, --top-p P, --min-p P, --repeat-penalty R, --seed S
      --stop TEXT          stop before TEXT (repeatable)
      --speculative MODE   speculative decoding for this reply: off, ngram, draft or auto
                           (default: the daemon's engine.speculative)
      --timeout SECONDS    end each reply after SECONDS (queued time included); what
                           was generated by then is printed, and the exit status is 6
      --socket PATH        the daemon's socket (default: $STRATA_SOCKET,
                           $XDG_RUNTIME_DIR/strata.sock, /run/strata/strata.sock)
      --json               print the protocol lines as received
  -v, --verbose            print prompt and generation speed on stderr
  -h, --help, --version

exit status: 0 ok, 1 the daemon returned an error, 2 usage error, 3 no daemon answers,
4 the connection broke mid-answer, 5 the daemon cut the reply off, 6 a reply reached
its deadline (--timeout or the daemon's limits.request_timeout), 130 interrupted.
See strata(1).
)";
}

}  // namespace strata::client
