// grammar/grammar.cpp — the grammar parser (recursive descent over the text) and the checks
// that make a parsed grammar runnable.
#include "grammar/grammar.h"

#include <algorithm>
#include <map>

namespace strata::grammar {

bool CharClass::matches(uint32_t cp) const {
    return may_match(cp, cp);
}

bool CharClass::may_match(uint32_t lo, uint32_t hi) const {
    if (!negated) {
        return std::any_of(ranges.begin(), ranges.end(),
                           [&](auto r) { return r.first <= hi && lo <= r.second; });
    }
    // Negated: some point of [lo, hi] lies outside every range. Walk lo upward past ranges.
    bool moved = true;
    while (moved && lo <= hi) {
        moved = false;
        for (auto [a, b] : ranges) {
            if (a <= lo && lo <= b) {
                if (b >= hi) return false;
                lo = b + 1;
                moved = true;
            }
        }
    }
    return lo <= hi;
}

namespace {

class Parser {
public:
    explicit Parser(std::string_view text) : s_(text) {}

    Grammar run() {
        skip_space();
        while (pos_ < s_.size()) {
            const size_t at = pos_;
            std::string name = parse_name();
            skip_space();
            if (s_.substr(pos_, 3) != "::=") fail("expected '::=' after rule name '" + name + "'");
            pos_ += 3;
            uint32_t r = rule_index(name, at);
            if (defined_.size() <= r) defined_.resize(r + 1, false);
            if (defined_[r]) fail("rule '" + name + "' is defined twice");
            defined_[r] = true;
            g_.rules[r].alts = parse_alternatives(false);
        }
        check_defined();
        auto it = index_.find("root");
        if (it == index_.end()) throw GrammarError("grammar has no 'root' rule");
        g_.root = it->second;
        return std::move(g_);
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        size_t line = 1, col = 1;
        for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
            if (s_[i] == '\n') { ++line; col = 1; } else { ++col; }
        }
        throw GrammarError("grammar line " + std::to_string(line) + " column " +
                           std::to_string(col) + ": " + what);
    }

    void skip_space() {
        while (pos_ < s_.size()) {
            char c = s_[pos_];
            if (c == '#') {
                while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
            } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                ++pos_;
            } else {
                return;
            }
        }
    }

    static bool name_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '_';
    }

    std::string parse_name() {
        size_t start = pos_;
        while (pos_ < s_.size() && name_char(s_[pos_])) ++pos_;
        if (start == pos_) fail("expected a rule name");
        return std::string(s_.substr(start, pos_ - start));
    }

    // Whether the text at pos_ starts a new rule definition ("name ::=").
    bool at_rule_start() const {
        size_t p = pos_;
        while (p < s_.size() && name_char(s_[p])) ++p;
        if (p == pos_) return false;
        while (p < s_.size() && (s_[p] == ' ' || s_[p] == '\t' || s_[p] == '\n' || s_[p] == '\r')) ++p;
        return s_.substr(p, 3) == "::=";
    }

    // The rule called name, added on first mention (at: where, for errors).
    uint32_t rule_index(const std::string& name, size_t at) {
        auto [it, added] = index_.emplace(name, static_cast<uint32_t>(g_.rules.size()));
        if (added) {
            g_.rules.push_back(Rule{name, {}});
            ref_pos_.push_back(at);
        }
        return it->second;
    }

    uint32_t new_rule(std::vector<Alternative> alts) {
        uint32_t r = static_cast<uint32_t>(g_.rules.size());
        g_.rules.push_back(Rule{"_gen" + std::to_string(r), std::move(alts)});
        ref_pos_.push_back(pos_);
        if (defined_.size() <= r) defined_.resize(r + 1, false);
        defined_[r] = true;
        return r;
    }

    std::vector<Alternative> parse_alternatives(bool nested) {
        std::vector<Alternative> alts;
        alts.push_back(parse_sequence(nested));
        while (pos_ < s_.size() && s_[pos_] == '|') {
            ++pos_;
            alts.push_back(parse_sequence(nested));
        }
        return alts;
    }

    Alternative parse_sequence(bool nested) {
        Alternative seq;
        for (;;) {
            skip_space();
            if (pos_ >= s_.size()) break;
            char c = s_[pos_];
            if (c == '|' || c == ')') break;
            if (!nested && at_rule_start()) break;
            size_t first = seq.size();
            parse_primary(seq);
            parse_repetition(seq, first);
        }
        if (nested && pos_ >= s_.size()) fail("missing ')'");
        return seq;
    }

    void parse_primary(Alternative& seq) {
        char c = s_[pos_];
        if (c == '"') {
            ++pos_;
            while (pos_ < s_.size() && s_[pos_] != '"') {
                uint32_t cp = parse_char();
                seq.push_back(Symbol{false, add_class({{cp, cp}}, false)});
            }
            if (pos_ >= s_.size()) fail("unterminated string literal");
            ++pos_;
        } else if (c == '[') {
            parse_class(seq);
        } else if (c == '.') {
            ++pos_;
            seq.push_back(Symbol{false, add_class({}, true)});
        } else if (c == '(') {
            ++pos_;
            auto alts = parse_alternatives(true);
            if (pos_ >= s_.size() || s_[pos_] != ')') fail("missing ')'");
            ++pos_;
            seq.push_back(Symbol{true, new_rule(std::move(alts))});
        } else if (name_char(c)) {
            const size_t at = pos_;
            const std::string name = parse_name();
            seq.push_back(Symbol{true, rule_index(name, at)});
        } else {
            fail(std::string("unexpected character '") + c + "'");
        }
    }

    void parse_class(Alternative& seq) {
        ++pos_;
        bool negated = pos_ < s_.size() && s_[pos_] == '^';
        if (negated) ++pos_;
        std::vector<std::pair<uint32_t, uint32_t>> ranges;
        while (pos_ < s_.size() && s_[pos_] != ']') {
            uint32_t lo = parse_char();
            uint32_t hi = lo;
            if (pos_ + 1 < s_.size() && s_[pos_] == '-' && s_[pos_ + 1] != ']') {
                ++pos_;
                hi = parse_char();
                if (hi < lo) fail("character range is reversed");
            }
            ranges.emplace_back(lo, hi);
        }
        if (pos_ >= s_.size()) fail("unterminated character class");
        ++pos_;
        seq.push_back(Symbol{false, add_class(std::move(ranges), negated)});
    }

    uint32_t add_class(std::vector<std::pair<uint32_t, uint32_t>> ranges, bool negated) {
        g_.classes.push_back(CharClass{std::move(ranges), negated});
        return static_cast<uint32_t>(g_.classes.size() - 1);
    }

    uint32_t parse_hex(size_t digits) {
        uint32_t v = 0;
        for (size_t i = 0; i < digits; ++i, ++pos_) {
            if (pos_ >= s_.size()) fail("truncated escape");
            char c = s_[pos_];
            int d = (c >= '0' && c <= '9') ? c - '0'
                    : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                    : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
            if (d < 0) fail("bad hex digit in escape");
            v = v * 16 + static_cast<uint32_t>(d);
        }
        if (v > 0x10FFFF) fail("code point out of range");
        return v;
    }

    // One character of a literal or class: an escape or one UTF-8 encoded code point.
    uint32_t parse_char() {
        unsigned char c = static_cast<unsigned char>(s_[pos_]);
        if (c == '\\') {
            if (++pos_ >= s_.size()) fail("truncated escape");
            char e = s_[pos_++];
            switch (e) {
                case 'n': return '\n';
                case 'r': return '\r';
                case 't': return '\t';
                case '\\': case '"': case ']': case '[': case '-': case '^': return static_cast<uint32_t>(e);
                case 'x': return parse_hex(2);
                case 'u': return parse_hex(4);
                case 'U': return parse_hex(8);
                default: --pos_; fail(std::string("unknown escape '\\") + e + "'");
            }
        }
        size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (n == 0 || pos_ + n > s_.size()) fail("invalid UTF-8 in grammar");
        uint32_t cp = n == 1 ? c : c & (0x7F >> n);
        for (size_t i = 1; i < n; ++i) {
            unsigned char b = static_cast<unsigned char>(s_[pos_ + i]);
            if ((b >> 6) != 2) fail("invalid UTF-8 in grammar");
            cp = (cp << 6) | (b & 0x3F);
        }
        pos_ += n;
        return cp;
    }

    size_t parse_count() {
        size_t start = pos_;
        size_t v = 0;
        while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
            v = v * 10 + static_cast<size_t>(s_[pos_++] - '0');
            if (v > 10000) fail("repetition count above 10000");
        }
        if (start == pos_) fail("expected a number in '{m,n}'");
        return v;
    }

    // x* x+ x? x{m,n} applied to seq[first..]: the item just parsed (one symbol).
    void parse_repetition(Alternative& seq, size_t first) {
        if (pos_ >= s_.size()) return;
        char c = s_[pos_];
        size_t min = 0, max = SIZE_MAX;
        if (c == '*') { ++pos_; }
        else if (c == '+') { ++pos_; min = 1; }
        else if (c == '?') { ++pos_; max = 1; }
        else if (c == '{') {
            ++pos_;
            min = parse_count();
            max = min;
            if (pos_ < s_.size() && s_[pos_] == ',') {
                ++pos_;
                max = (pos_ < s_.size() && s_[pos_] == '}') ? SIZE_MAX : parse_count();
            }
            if (pos_ >= s_.size() || s_[pos_] != '}') fail("expected '}'");
            ++pos_;
            if (max < min) fail("repetition {m,n} with n < m");
        } else {
            return;
        }
        Alternative item(seq.begin() + static_cast<std::ptrdiff_t>(first), seq.end());
        seq.resize(first);
        for (size_t i = 0; i < min; ++i) seq.insert(seq.end(), item.begin(), item.end());
        if (max == SIZE_MAX) {
            // R ::= item R | ε  (right recursion: the automaton's stack does not grow)
            uint32_t r = new_rule({});
            Alternative loop = item;
            loop.push_back(Symbol{true, r});
            g_.rules[r].alts = {loop, {}};
            seq.push_back(Symbol{true, r});
        } else if (max > min) {
            // (item (item (...)?)?)? nested max - min deep
            uint32_t inner = new_rule({item, {}});
            for (size_t i = min + 1; i < max; ++i) {
                Alternative a = item;
                a.push_back(Symbol{true, inner});
                inner = new_rule({a, {}});
            }
            seq.push_back(Symbol{true, inner});
        }
    }

    void check_defined() {
        for (size_t r = 0; r < g_.rules.size(); ++r) {
            if (r >= defined_.size() || !defined_[r]) {
                pos_ = ref_pos_[r];
                fail("undefined rule '" + g_.rules[r].name + "'");
            }
        }
    }

    std::string_view s_;
    size_t pos_ = 0;
    Grammar g_;
    std::map<std::string, uint32_t> index_;
    std::vector<bool> defined_;
    std::vector<size_t> ref_pos_;  // where each rule was first named, for errors
};

// Rules that can match the empty string (fixpoint).
std::vector<bool> nullable_rules(const Grammar& g) {
    std::vector<bool> nullable(g.rules.size(), false);
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t r = 0; r < g.rules.size(); ++r) {
            if (nullable[r]) continue;
            for (const auto& alt : g.rules[r].alts) {
                bool all = std::all_of(alt.begin(), alt.end(),
                                       [&](Symbol s) { return s.is_rule && nullable[s.index]; });
                if (all) { nullable[r] = true; changed = true; break; }
            }
        }
    }
    return nullable;
}

// Throws when a rule can reach itself without consuming a character: expanding it would
// never end.
void check_left_recursion(const Grammar& g) {
    auto nullable = nullable_rules(g);
    std::vector<std::vector<uint32_t>> left(g.rules.size());  // rules reachable at the left edge
    for (size_t r = 0; r < g.rules.size(); ++r) {
        for (const auto& alt : g.rules[r].alts) {
            for (Symbol s : alt) {
                if (!s.is_rule) break;
                left[r].push_back(s.index);
                if (!nullable[s.index]) break;
            }
        }
    }
    std::vector<int> state(g.rules.size(), 0);  // 0 new, 1 on the path, 2 done
    auto visit = [&](auto& self, uint32_t r) -> void {
        state[r] = 1;
        for (uint32_t n : left[r]) {
            if (state[n] == 1) throw GrammarError("grammar rule '" + g.rules[n].name + "' is left-recursive");
            if (state[n] == 0) self(self, n);
        }
        state[r] = 2;
    };
    for (uint32_t r = 0; r < g.rules.size(); ++r) {
        if (state[r] == 0) visit(visit, r);
    }
}

}  // namespace

Grammar Grammar::parse(std::string_view text) {
    Grammar g = Parser(text).run();
    check_left_recursion(g);
    return g;
}

}  // namespace strata::grammar
