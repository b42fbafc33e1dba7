// chat/lexer.cpp — jinja2's tokenisation with trim_blocks, lstrip_blocks and '-'/'+'
// whitespace control. Must not touch: the grammar (parser), values.
#include "chat/lexer.h"

#include <array>
#include <cctype>

#include "chat/text.h"
#include "chat/value.h"

namespace strata::chat {

namespace {

std::string normalise_newlines(std::string_view src) {
    std::string out;
    out.reserve(src.size());
    for (size_t i = 0; i < src.size(); ++i) {
        if (src[i] == '\r') {
            out += '\n';
            if (i + 1 < src.size() && src[i + 1] == '\n') ++i;
        } else {
            out += src[i];
        }
    }
    if (!out.empty() && out.back() == '\n') out.pop_back();  // keep_trailing_newline=False
    return out;
}

bool all_space(std::string_view s) {
    for (char32_t c : text::decode(s))
        if (!text::is_space(c)) return false;
    return true;
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Python's "unicode-escape" decoding of a string literal's body.
std::string unescape(std::string_view body, int line) {
    std::string out;
    for (size_t i = 0; i < body.size(); ++i) {
        if (body[i] != '\\' || i + 1 == body.size()) {
            out += body[i];
            continue;
        }
        const char c = body[++i];
        switch (c) {
            case '\n': break;
            case '\\': out += '\\'; break;
            case '\'': out += '\''; break;
            case '"': out += '"'; break;
            case 'a': out += '\a'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'v': out += '\v'; break;
            case 'x':
            case 'u':
            case 'U': {
                const size_t n = c == 'x' ? 2 : c == 'u' ? 4 : 8;
                uint32_t cp = 0;
                for (size_t k = 0; k < n; ++k) {
                    const int h = i + 1 + k < body.size() ? hex_value(body[i + 1 + k]) : -1;
                    if (h < 0) throw TemplateError("line " + std::to_string(line) + ": truncated \\" + c + " escape in a string");
                    cp = cp * 16 + static_cast<uint32_t>(h);
                }
                if (cp > 0x10FFFF) throw TemplateError("line " + std::to_string(line) + ": \\U escape out of range");
                out += text::encode(std::u32string(1, static_cast<char32_t>(cp)));
                i += n;
                break;
            }
            default:
                if (c >= '0' && c <= '7') {
                    uint32_t cp = 0;
                    size_t k = 0;
                    for (; k < 3 && i + k < body.size() && body[i + k] >= '0' && body[i + k] <= '7'; ++k) cp = cp * 8 + (body[i + k] - '0');
                    out += text::encode(std::u32string(1, static_cast<char32_t>(cp)));
                    i += k - 1;
                } else {
                    out += '\\';
                    out += c;
                }
        }
    }
    return out;
}

class Lexer {
public:
    explicit Lexer(std::string src) : s_(std::move(src)) {}

    std::vector<Token> run() {
        while (pos_ < s_.size()) {
            const size_t tag = find_tag(pos_);
            std::string_view text(s_.data() + pos_, (tag == std::string::npos ? s_.size() : tag) - pos_);
            if (tag == std::string::npos) {
                emit_text(text);
                break;
            }
            const char kind = s_[tag + 1];
            const char sign = tag + 2 < s_.size() ? s_[tag + 2] : '\0';
            if (sign == '-') {
                text = rstrip(text);
            } else if (sign != '+' && kind != '{') {
                const size_t nl = text.rfind('\n');
                const size_t l_pos = nl == std::string_view::npos ? 0 : nl + 1;
                if ((l_pos > 0 || line_starting_) && all_space(text.substr(l_pos))) text = text.substr(0, l_pos);
            }
            emit_text(text);
            advance_to(tag + 2 + (sign == '-' || sign == '+' ? 1 : 0));
            if (kind == '#') comment();
            else tag_body(kind == '{');
        }
        tokens_.push_back({Token::Type::End, "", line_});
        return std::move(tokens_);
    }

private:
    std::string s_;
    size_t pos_ = 0;
    int line_ = 1;
    bool line_starting_ = true;
    std::vector<Token> tokens_;

    [[noreturn]] void fail(const std::string& what) const { throw TemplateError("line " + std::to_string(line_) + ": " + what); }

    size_t find_tag(size_t from) const {
        for (size_t i = s_.find('{', from); i != std::string::npos; i = s_.find('{', i + 1))
            if (i + 1 < s_.size() && (s_[i + 1] == '{' || s_[i + 1] == '%' || s_[i + 1] == '#')) return i;
        return std::string::npos;
    }

    static std::string_view rstrip(std::string_view t) {
        std::u32string cps = text::decode(t);
        size_t n = cps.size();
        while (n > 0 && text::is_space(cps[n - 1])) --n;
        return t.substr(0, text::encode(std::u32string_view(cps).substr(0, n)).size());
    }

    void emit_text(std::string_view t) {
        if (!t.empty()) tokens_.push_back({Token::Type::Text, std::string(t), line_});
    }

    void advance_to(size_t p) {
        for (; pos_ < p; ++pos_)
            if (s_[pos_] == '\n') ++line_;
    }

    // After a tag's end at pos_: '-' strips all whitespace; otherwise trim_blocks (for block
    // and comment tags) drops one newline.
    void after_tag_end(bool strip, bool trim_newline) {
        const size_t start = pos_;
        if (strip) {
            std::u32string rest = text::decode(std::string_view(s_).substr(pos_));
            size_t n = 0;
            while (n < rest.size() && text::is_space(rest[n])) ++n;
            advance_to(pos_ + text::encode(std::u32string_view(rest).substr(0, n)).size());
        } else if (trim_newline && pos_ < s_.size() && s_[pos_] == '\n') {
            advance_to(pos_ + 1);
        }
        line_starting_ = pos_ > start ? s_[pos_ - 1] == '\n' : false;
    }

    void comment() {
        const size_t end = s_.find("#}", pos_);
        if (end == std::string::npos) fail("missing end of comment tag");
        const bool strip = end > pos_ && s_[end - 1] == '-';
        advance_to(end + 2);
        after_tag_end(strip, true);
    }

    // Tokens of an expression or statement up to its closing tag.
    void tag_body(bool variable) {
        tokens_.push_back({variable ? Token::Type::VarBegin : Token::Type::BlockBegin, "", line_});
        int depth = 0;
        for (;;) {
            while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) advance_to(pos_ + 1);
            if (pos_ >= s_.size()) fail(variable ? "unexpected end of template, expected '}}'" : "unexpected end of template, expected '%}'");
            if (depth == 0 && closes(variable)) return;
            const char c = s_[pos_];
            if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') name();
            else if (std::isdigit(static_cast<unsigned char>(c))) number();
            else if (c == '\'' || c == '"') string(c);
            else op(depth);
        }
    }

    bool closes(bool variable) {
        const std::string_view rest = std::string_view(s_).substr(pos_);
        const std::string_view close = variable ? "}}" : "%}";
        size_t len = 0;
        bool strip = false;
        if (rest.substr(0, 1) == "-" && rest.substr(1, 2) == close) len = 3, strip = true;
        else if (!variable && rest.substr(0, 1) == "+" && rest.substr(1, 2) == close) len = 3;
        else if (rest.substr(0, 2) == close) len = 2;
        if (len == 0) return false;
        const bool plus = !variable && rest[0] == '+';
        tokens_.push_back({variable ? Token::Type::VarEnd : Token::Type::BlockEnd, "", line_});
        advance_to(pos_ + len);
        after_tag_end(strip, !variable && !plus);
        return true;
    }

    void name() {
        size_t e = pos_;
        while (e < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[e])) || s_[e] == '_')) ++e;
        tokens_.push_back({Token::Type::Name, s_.substr(pos_, e - pos_), line_});
        advance_to(e);
    }

    void number() {
        auto digits = [&](size_t p) {
            while (p < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[p])) || s_[p] == '_')) ++p;
            return p;
        };
        size_t e = digits(pos_);
        bool is_float = false;
        const bool after_dot = !tokens_.empty() && tokens_.back().type == Token::Type::Op && tokens_.back().text == ".";
        if (!after_dot && e + 1 < s_.size() && s_[e] == '.' && std::isdigit(static_cast<unsigned char>(s_[e + 1]))) {
            e = digits(e + 1);
            is_float = true;
        }
        if (!after_dot && e < s_.size() && (s_[e] == 'e' || s_[e] == 'E')) {
            size_t p = e + 1;
            if (p < s_.size() && (s_[p] == '+' || s_[p] == '-')) ++p;
            if (p < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p]))) {
                e = digits(p);
                is_float = true;
            }
        }
        std::string t = s_.substr(pos_, e - pos_);
        std::erase(t, '_');
        tokens_.push_back({is_float ? Token::Type::Float : Token::Type::Int, t, line_});
        advance_to(e);
    }

    void string(char quote) {
        size_t e = pos_ + 1;
        while (e < s_.size() && s_[e] != quote) e += s_[e] == '\\' ? 2 : 1;
        if (e >= s_.size()) fail("unterminated string");
        tokens_.push_back({Token::Type::String, unescape(std::string_view(s_).substr(pos_ + 1, e - pos_ - 1), line_), line_});
        advance_to(e + 1);
    }

    void op(int& depth) {
        static constexpr std::array<std::string_view, 6> two = {"//", "**", "==", "!=", "<=", ">="};
        const std::string_view rest = std::string_view(s_).substr(pos_);
        for (auto t : two)
            if (rest.substr(0, 2) == t) {
                tokens_.push_back({Token::Type::Op, std::string(t), line_});
                advance_to(pos_ + 2);
                return;
            }
        const char c = rest[0];
        if (std::string_view("+-*/%~<>=()[]{},.:|").find(c) == std::string_view::npos)
            fail(std::string("unexpected character '") + c + "'");
        if (c == '(' || c == '[' || c == '{') ++depth;
        if ((c == ')' || c == ']' || c == '}') && --depth < 0) fail(std::string("unexpected '") + c + "'");
        tokens_.push_back({Token::Type::Op, std::string(1, c), line_});
        advance_to(pos_ + 1);
    }
};

}  // namespace

std::vector<Token> lex(std::string_view source) { return Lexer(normalise_newlines(source)).run(); }

}  // namespace strata::chat
