// chat/template.h — a parsed Jinja template and its sandboxed rendering: the public face of
// the interpreter. Rendering follows jinja2's ImmutableSandboxedEnvironment(trim_blocks,
// lstrip_blocks, loopcontrols): values cannot be mutated except namespace() attributes, no
// file or environment access exists, and every render is bounded in steps, output size and
// call depth, so a failing or looping template is a TemplateError, never a crash or a hang.
// Must not touch: chat conventions (chat/chat.h), JSON libraries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "chat/value.h"

namespace strata::chat {

struct RenderLimits {
    size_t max_output = size_t{4} << 20;   // bytes of output, and of any string or list built
    uint64_t max_steps = 5'000'000;       // statements and expressions evaluated
    int max_call_depth = 64;              // nested macro calls
};

struct Stmt;

class Template {
public:
    // Parses the source; a TemplateError names the line of a syntax error.
    explicit Template(std::string_view source);
    ~Template();
    Template(Template&&) noexcept;
    Template& operator=(Template&&) noexcept;

    // The output for these variables (on top of range, namespace and dict). Errors, including
    // raise_exception's TemplateRaised, are thrown as TemplateError.
    std::string render(const Dict& variables, const RenderLimits& limits = {}) const;

private:
    std::unique_ptr<std::vector<std::unique_ptr<Stmt>>> body_;
};

}  // namespace strata::chat
