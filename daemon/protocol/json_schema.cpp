// daemon/protocol/json_schema.cpp — one grammar rule per schema node, named by its path.
#include "protocol/json_schema.h"

#include <boost/json/serialize.hpp>
#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "grammar/json.h"
#include "protocol/errors.h"

namespace json = boost::json;

namespace strata::daemon {

namespace {

// String formats, on top of grammar::kJsonRules.
constexpr std::string_view kFormats = R"(date ::= "\"" ymd "\""
ymd ::= [0-9]{4} "-" ( "0" [1-9] | "1" [0-2] ) "-" ( "0" [1-9] | [12] [0-9] | "3" [01] )
hms ::= ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]{1,6} )? ( "Z" | [+-] ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] )
time ::= "\"" hms "\""
date-time ::= "\"" ymd "T" hms "\""
uuid ::= "\"" [0-9a-f]{8} "-" [0-9a-f]{4} "-" [0-9a-f]{4} "-" [0-9a-f]{4} "-" [0-9a-f]{12} "\""
)";

const std::set<std::string> kIgnored = {"title", "description", "$schema", "$id", "default", "examples", "$comment"};

// A JSON value as a grammar literal: its serialization with quotes and backslashes escaped.
std::string literal(const json::value& v) {
    std::string out = "\"";
    for (char c : json::serialize(v)) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

// Raw text as a grammar literal.
std::string text_literal(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '\n') out += "\\n";
        else if (c == '"' || c == '\\') out += std::string("\\") + c;
        else out += c;
    }
    return out + "\"";
}

class Converter {
public:
    Converter(const json::value& root, std::string field) : root_(root), field_(std::move(field)) {}

    std::string run(const std::string& before, const std::string& after) {
        const std::string top = visit(root_, "s", field_);
        auto text = [](const std::string& t) { return t.empty() ? std::string() : text_literal(t); };
        return "root ::= " + text(before) + " " + top + " " + text(after) + "\n" + rules_ + std::string(grammar::kJsonRules) +
               std::string(kFormats);
    }

private:
    [[noreturn]] void fail(const std::string& where, const std::string& what) const {
        throw invalid_params(field_, (where.rfind(field_, 0) == 0 ? where : field_ + " " + where) + ": " + what);
    }

    // Returns a grammar expression for the schema (a rule name), adding its rules.
    std::string visit(const json::value& s, const std::string& name, const std::string& where) {
        if (s.is_bool()) return s.get_bool() ? "value" : fail_false(where);
        if (!s.is_object()) fail(where, "a schema must be an object or a boolean");
        const json::object& o = s.get_object();
        static const std::set<std::string> known = {"type", "properties", "required", "additionalProperties",
            "enum", "const", "items", "minItems", "maxItems", "anyOf", "oneOf", "$ref", "$defs", "definitions",
            "minLength", "maxLength", "format"};
        for (const auto& kv : o) {
            const std::string key(kv.key());
            if (!known.count(key) && !kIgnored.count(key)) fail(where, "unsupported keyword '" + key + "'");
        }
        check_alone(o, where);
        if (auto* r = o.if_contains("$ref")) return ref(*r, where);
        if (o.contains("const") || o.contains("enum")) return listed(o, name, where);
        for (const char* key : {"anyOf", "oneOf"}) {
            if (auto* list = o.if_contains(key)) {
                if (!list->is_array() || list->get_array().empty()) fail(where + "." + key, "must be a non-empty array");
                if (std::string(key) == "oneOf") check_disjoint(list->get_array(), where + ".oneOf");
                std::string alts;
                size_t i = 0;
                for (const auto& sub : list->get_array()) {
                    const std::string n = name + "-" + std::to_string(i);
                    alts += (alts.empty() ? "" : " | ") + visit(sub, n, where + "." + key + "[" + std::to_string(i) + "]");
                    ++i;
                }
                return add(name, alts);
            }
        }
        auto* type = o.if_contains("type");
        if (type == nullptr) return o.contains("properties") ? object(o, name, where) : "value";
        if (type->is_array()) {
            std::string alts;
            for (const auto& t : type->get_array()) alts += (alts.empty() ? "" : " | ") + typed(o, t, name + "-" + std::string(t.is_string() ? t.get_string() : "x"), where);
            if (alts.empty()) fail(where + ".type", "must not be empty");
            return add(name, alts);
        }
        return typed(o, *type, name, where);
    }

    // $ref, const, enum, anyOf and oneOf choose the whole document: combined with another
    // constraint the grammar would have to intersect them, which it does not do, except that
    // const, enum and type narrow each other (listed() keeps the values all of them admit).
    void check_alone(const json::object& o, const std::string& where) const {
        auto is_selector = [](const std::string& k) { return k == "$ref" || k == "const" || k == "enum" || k == "anyOf" || k == "oneOf"; };
        auto is_list = [](const std::string& k) { return k == "const" || k == "enum" || k == "type"; };
        auto first = std::find_if(o.begin(), o.end(), [&](const auto& kv) { return is_selector(std::string(kv.key())); });
        if (first == o.end()) return;
        const std::string selector(first->key());
        for (const auto& kv : o) {
            const std::string key(kv.key());
            if (kIgnored.count(key) || key == "$defs" || key == "definitions" || key == selector) continue;
            if (!(is_list(selector) && is_list(key))) fail(where, "'" + selector + "' combined with '" + key + "' is not supported");
        }
    }

    // const and/or enum, with type: the values that every one of them admits, as literals.
    std::string listed(const json::object& o, const std::string& name, const std::string& where) {
        const json::value* c = o.if_contains("const");
        const json::value* e = o.if_contains("enum");
        if (e && (!e->is_array() || e->get_array().empty())) fail(where + ".enum", "must be a non-empty array");
        std::string alts;
        for (const auto& v : e ? e->get_array() : json::array{*c})
            if ((c == nullptr || v == *c) && of_type(o, v, where)) alts += (alts.empty() ? "" : " | ") + literal(v);
        if (alts.empty()) fail(where, "no value of '" + std::string(e ? "enum" : "const") + "' is admitted by the other keywords");
        return add(name, alts);
    }

    // Whether v is of the schema's type (or of one of its types); true without a type.
    bool of_type(const json::object& o, const json::value& v, const std::string& where) const {
        const json::value* type = o.if_contains("type");
        if (type == nullptr) return true;
        const json::array types = type->is_array() ? type->get_array() : json::array{*type};
        return std::any_of(types.begin(), types.end(), [&](const json::value& t) {
            if (!t.is_string()) fail(where + ".type", "must be a string or an array of strings");
            const std::string_view n = t.get_string();
            if (n == "integer") return v.is_int64() || v.is_uint64() || (v.is_double() && std::trunc(v.get_double()) == v.get_double());
            if (n == "number") return v.is_number();
            if (n == "string") return v.is_string();
            if (n == "boolean") return v.is_bool();
            if (n == "null") return v.is_null();
            if (n == "object") return v.is_object();
            if (n == "array") return v.is_array();
            fail(where + ".type", "unknown type '" + std::string(n) + "'");
        });
    }

    // oneOf is generated as anyOf, which is only right when no document matches two
    // branches: each branch must have its own single type (integer and number overlap).
    void check_disjoint(const json::array& branches, const std::string& where) const {
        std::set<std::string> types;
        for (const auto& b : branches) {
            const json::value* t = b.is_object() ? b.get_object().if_contains("type") : nullptr;
            std::string type = t && t->is_string() ? std::string(t->get_string()) : "";
            if (type == "integer") type = "number";
            if (type.empty() || !types.insert(type).second)
                fail(where, "branches that may overlap are not supported (give each branch a different type)");
        }
    }

    std::string fail_false(const std::string& where) const { fail(where, "the schema false matches nothing"); }

    std::string typed(const json::object& o, const json::value& type, const std::string& name, const std::string& where) {
        if (!type.is_string()) fail(where + ".type", "must be a string or an array of strings");
        const std::string t(type.get_string());
        if (t == "object") return object(o, name, where);
        if (t == "array") return array(o, name, where);
        if (t == "string") return string(o, name, where);
        if (t == "number" || t == "integer" || t == "boolean" || t == "null") return t;
        fail(where + ".type", "unknown type '" + t + "'");
    }

    std::string object(const json::object& o, const std::string& name, const std::string& where) {
        std::set<std::string> required;
        if (auto* r = o.if_contains("required")) {
            if (!r->is_array()) fail(where + ".required", "must be an array of strings");
            for (const auto& v : r->get_array()) {
                if (!v.is_string()) fail(where + ".required", "must be an array of strings");
                required.emplace(v.get_string());
            }
        }
        auto* props = o.if_contains("properties");
        if (props && !props->is_object()) fail(where + ".properties", "must be an object");
        if (auto* ap = o.if_contains("additionalProperties"); ap && !ap->is_bool())
            fail(where + ".additionalProperties", "only true or false is supported");
        // Members in declaration order; a required one always, an optional one maybe, with
        // commas placed by chaining: after the first emitted member each next one is ", m".
        std::vector<std::pair<std::string, bool>> members;  // (rule, required)
        size_t i = 0;
        if (props) {
            for (const auto& kv : props->get_object()) {
                const std::string key(kv.key());
                const std::string value = visit(kv.value(), name + "-p" + std::to_string(i), where + ".properties." + key);
                members.emplace_back(add(name + "-m" + std::to_string(i), literal(json::value(key)) + " ws \":\" ws " + value), required.count(key) > 0);
                ++i;
            }
        }
        for (const auto& r : required)
            if (!props || !props->get_object().contains(r)) fail(where + ".required", "'" + r + "' is not in properties");
        // tail(k): the members from k on, each preceded by a comma.
        std::string tail = "";
        for (size_t k = members.size(); k-- > 0;) {
            const std::string item = "\",\" ws " + members[k].first + " ws";
            const std::string rest = tail.empty() ? "" : " " + tail;
            tail = add(name + "-t" + std::to_string(k), members[k].second ? item + rest : "(" + item + ")?" + rest);
        }
        // head(k): the first emitted member is k (all before it optional and skipped).
        std::string body;
        for (size_t k = 0; k < members.size(); ++k) {
            const std::string rest = k + 1 < members.size() ? " " + name + "-t" + std::to_string(k + 1) : "";
            body += (body.empty() ? "" : " | ") + members[k].first + " ws" + rest;
            if (members[k].second) break;
        }
        const bool all_optional = std::none_of(members.begin(), members.end(), [](auto& m) { return m.second; });
        if (body.empty() || all_optional) body = body.empty() ? "\"\"" : body + " | \"\"";
        return add(name, "\"{\" ws ( " + body + " ) \"}\"");
    }

    size_t count(const json::object& o, const char* key, const std::string& where) const {
        auto* v = o.if_contains(key);
        if (v == nullptr) return SIZE_MAX;
        if (!v->is_int64() && !v->is_uint64()) fail(where + "." + key, "must be a non-negative integer");
        if (v->is_int64() && v->get_int64() < 0) fail(where + "." + key, "must be a non-negative integer");
        const uint64_t n = v->is_int64() ? static_cast<uint64_t>(v->get_int64()) : v->get_uint64();
        if (n > 1000) fail(where + "." + key, "above 1000 is not supported");
        return n;
    }

    static std::string bounds(size_t min, size_t max) {
        if (max == SIZE_MAX) return "{" + std::to_string(min) + ",}";
        return "{" + std::to_string(min) + "," + std::to_string(max) + "}";
    }

    std::string array(const json::object& o, const std::string& name, const std::string& where) {
        std::string item = "value";
        if (auto* items = o.if_contains("items")) item = visit(*items, name + "-i", where + ".items");
        size_t min = count(o, "minItems", where), max = count(o, "maxItems", where);
        if (min == SIZE_MAX) min = 0;
        if (max < min) fail(where + ".maxItems", "is below minItems");
        if (max == 0) return add(name, "\"[\" ws \"]\"");
        const std::string more = "( \",\" ws " + item + " ws )" + bounds(min ? min - 1 : 0, max == SIZE_MAX ? max : max - 1);
        const std::string some = item + " ws " + more;
        return add(name, "\"[\" ws " + (min == 0 ? "( " + some + " )?" : some) + " \"]\"");
    }

    std::string string(const json::object& o, const std::string& name, const std::string& where) {
        if (auto* f = o.if_contains("format")) {
            static const std::set<std::string> formats = {"date", "time", "date-time", "uuid"};
            if (!f->is_string() || !formats.count(std::string(f->get_string())))
                fail(where + ".format", "unsupported format " + json::serialize(*f) + " (date, time, date-time, uuid are)");
            return std::string(f->get_string());
        }
        size_t min = count(o, "minLength", where), max = count(o, "maxLength", where);
        if (min == SIZE_MAX && max == SIZE_MAX) return "string";
        if (min == SIZE_MAX) min = 0;
        if (max < min) fail(where + ".maxLength", "is below minLength");
        return add(name, "\"\\\"\" char" + bounds(min, max) + " \"\\\"\"");
    }

    std::string ref(const json::value& r, const std::string& where) {
        if (!r.is_string()) fail(where + ".$ref", "must be a string");
        const std::string target(r.get_string());
        for (const char* prefix : {"#/$defs/", "#/definitions/"}) {
            const std::string p(prefix);
            if (target.rfind(p, 0) != 0) continue;
            const std::string key = target.substr(p.size());
            const std::string rule = "def-" + std::to_string(std::hash<std::string>{}(target) % 1000000007);
            if (refs_.count(rule)) return rule;
            refs_.insert(rule);
            const std::string section = p.substr(2, p.size() - 3);  // "$defs" or "definitions"
            const json::value* defs = root_.is_object() ? root_.get_object().if_contains(section) : nullptr;
            const json::value* def = defs && defs->is_object() ? defs->get_object().if_contains(key) : nullptr;
            if (def == nullptr) fail(where + ".$ref", "'" + target + "' is not defined");
            const std::string body = visit(*def, rule + "-b", target);
            add(rule, body);
            return rule;
        }
        fail(where + ".$ref", "only local references #/$defs/NAME or #/definitions/NAME are supported");
    }

    std::string add(const std::string& name, const std::string& body) {
        rules_ += name + " ::= " + body + "\n";
        return name;
    }

    const json::value& root_;
    std::string field_;
    std::string rules_;
    std::set<std::string> refs_;
};

}  // namespace

std::string schema_grammar(const json::value& schema, const std::string& field, const std::string& before, const std::string& after) {
    return Converter(schema, field).run(before, after);
}

}  // namespace strata::daemon
