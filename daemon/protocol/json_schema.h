// daemon/protocol/json_schema.h — JSON Schema to grammar text (response_format json_schema,
// native `json_schema`).
// Owns: the supported subset — type (object, array, string, number, integer, boolean, null,
// or a list of them), properties (emitted in their order; those not in required optional),
// required, additionalProperties (false, or true/absent: no extra members are generated),
// enum, const, items, minItems, maxItems, nested objects, anyOf, oneOf, $ref to #/$defs/...
// or #/definitions/..., string minLength/maxLength and format date, time, date-time, uuid.
// enum and const combine with type and with each other (the values all of them admit);
// $ref, anyOf and oneOf stand alone.
// Annotations (title, description, $schema, $id, default, examples) are ignored.
// Must not touch: grammar parsing (lib/grammar).
#pragma once

#include <boost/json/value.hpp>
#include <string>

namespace strata::daemon {

// Grammar text for documents valid against schema, between the texts `before` and `after`.
// Throws invalid_params naming field and the unsupported keyword or bad value.
std::string schema_grammar(const boost::json::value& schema, const std::string& field, const std::string& before = "",
                           const std::string& after = "");

}  // namespace strata::daemon
