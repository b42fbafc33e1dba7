// client/strata-gguf/cmd_template.cpp — `strata-gguf template TEMPLATE.jinja|MODEL.gguf
// --messages MESSAGES.json`: renders a chat template exactly as Hugging Face's
// apply_chat_template would, for testing and debugging templates; and `strata-gguf template
// TEMPLATE.jinja --into MODEL.gguf --out OUT.gguf`: a copy of the model with that template.
// Owns: reading the messages file (JSON into chat::Value) and the model's template and
// special tokens.
// Must not touch: the interpreter (lib/chat).
#include <boost/json.hpp>
#include <cstdio>
#include <fstream>

#include "args.h"
#include "chat/chat.h"
#include "chat/json_value.h"
#include "commands.h"
#include "gguf/gguf.h"
#include "import_common.h"
#include "model_io.h"
#include "tokenizer/tokenizer.h"

namespace strata::tool {
namespace {

namespace json = boost::json;


bool is_gguf(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    char magic[4] = {};
    in.read(magic, 4);
    return in.gcount() == 4 && std::string_view(magic, 4) == "GGUF";
}

// The template text and the special tokens' text (from a GGUF; empty for a .jinja file).
struct Source {
    std::string jinja, bos, eos;
};

Source load_source(const std::string& path) {
    if (!is_gguf(path)) return {read_file(path), "", ""};
    auto file = gguf::File::open(path);
    auto jinja = file->get_string("tokenizer.chat_template");
    if (!jinja) throw std::runtime_error(path + " has no chat template (tokenizer.chat_template)");
    Source s{std::string(*jinja), "", ""};
    auto tok = tokenizer::Tokenizer::from_gguf(*file);
    if (tok->bos() >= 0) s.bos = std::string(tok->token_text(tok->bos()));
    if (tok->eos() >= 0) s.eos = std::string(tok->token_text(tok->eos()));
    return s;
}

chat::ChatInput read_messages(const std::string& path) {
    json::value root;
    try {
        root = json::parse(read_file(path));
    } catch (const std::system_error& e) {
        throw std::runtime_error(path + ": not valid JSON: " + e.what());
    }
    const auto* obj = root.if_object();
    const json::value* messages = obj ? obj->if_contains("messages") : nullptr;
    if (messages == nullptr || !messages->is_array()) throw std::runtime_error(path + ": expected {\"messages\": [...], \"tools\": [...]}");
    chat::ChatInput in;
    in.messages = chat::to_value(*messages);
    if (const auto* tools = obj->if_contains("tools"); tools && !tools->is_null()) in.tools = chat::to_value(*tools);
    return in;
}

// The model at `into` copied to `out` with `jinja` as its chat template (which must parse).
int write_template(const std::string& jinja, const std::string& into, const std::string& out) {
    chat::Template parsed(jinja);
    auto model = gguf::File::open(into);
    gguf::Writer w(model->alignment());
    copy_model(*model, w, [](std::string_view key) { return key != "tokenizer.chat_template"; });
    w.set_string("tokenizer.chat_template", jinja);
    w.write(out);
    std::printf("%s: %s with a chat template of %zu bytes\n", out.c_str(), into.c_str(), jinja.size());
    return 0;
}

}  // namespace

int cmd_template(const Argv& argv) {
    Args args(argv, {"messages", "bos-token", "eos-token", "date", "into", "out"}, {"add-generation-prompt"});
    if (const auto into = args.get("into")) {
        const auto out = args.get("out");
        if (!out) throw UsageError("--into MODEL.gguf needs --out OUT.gguf");
        return write_template(read_file(args.pos(0, "TEMPLATE")), *into, *out);
    }
    const auto messages = args.get("messages");
    if (!messages) throw UsageError("--messages MESSAGES.json is required");
    const Source src = load_source(args.pos(0, "TEMPLATE"));
    chat::ChatInput in = read_messages(*messages);
    in.add_generation_prompt = args.flag("add-generation-prompt");
    in.bos_token = args.get_or("bos-token", src.bos);
    in.eos_token = args.get_or("eos-token", src.eos);
    in.date = args.get("date") ? chat::parse_date(*args.get("date")) : chat::today();
    try {
        const std::string out = chat::apply_chat_template(chat::Template(src.jinja), in);
        std::fwrite(out.data(), 1, out.size(), stdout);
        return 0;
    } catch (const chat::TemplateRaised& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}

}  // namespace strata::tool
