// chat/json_value.h — a JSON document (Boost.JSON) as a template Value, for the programs that
// hold JSON (the daemon's chat requests, strata-gguf template): null → none, numbers,
// strings, arrays → lists, objects → dicts in their member order. Built as its own small
// library (chat_json_dep), so that the chat concern does not depend on a JSON library.
#pragma once

#include <boost/json/value.hpp>

#include "chat/value.h"

namespace strata::chat {

Value to_value(const boost::json::value& v);

}  // namespace strata::chat
