// daemon/responses/response_store.h — stored responses (/v1/responses with store: true): each
// response object with the items of its conversation (the input items it answered, stored
// ones first, and its output), per user, for GET and DELETE /v1/responses/{id} and for
// previous_response_id. When the daemon has a state directory each is the file
// STATE_DIR/responses/ID.json (the directory made, mode 0700, when the first is stored; each
// written durably; its owner and last use indexed in memory, read back at start), so that they survive a restart and take no memory; else they are kept in
// memory. A response unused (created, or continued) for limits.session_idle_timeout is
// forgotten, as a session is.
// Owns: those files and that lifetime. Must not touch: the response shapes (responses.h).
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <cstdint>
#include <map>
#include <string>

namespace strata::daemon {

class ResponseStore {
public:
    // `state_dir` "": in memory only. Unreadable files are logged and skipped.
    explicit ResponseStore(const std::string& state_dir);

    // Failing to write the file is logged (the response is kept in memory then).
    // In the others, `idle_timeout_s` is limits.session_idle_timeout (0: never forgotten).
    void put(uint32_t uid, const boost::json::object& response, boost::json::array context);
    // The response `id` of `uid` (root: anyone's); throws ApiError (not found).
    boost::json::object get(uint32_t uid, const std::string& id, int64_t idle_timeout_s);
    // Its items (context, then output) to continue it, and it counts as used; throws ApiError
    // (invalid_params naming previous_response_id) when there is none.
    boost::json::array continuation(uint32_t uid, const std::string& id, int64_t idle_timeout_s);
    void erase(uint32_t uid, const std::string& id, int64_t idle_timeout_s);  // throws ApiError (not found)

private:
    struct Stored {
        uint32_t uid = 0;
        int64_t last_used = 0;  // unix seconds
        boost::json::object record;  // {"items", "response"}; empty while its file holds it
    };
    Stored* find(uint32_t uid, const std::string& id, int64_t idle_timeout_s);
    boost::json::object record_of(const std::string& id, const Stored& stored) const;  // throws ApiError (internal)
    void expire(int64_t idle_timeout_s);
    // Writes the record to its file (then only the index stays in memory) or keeps it in memory.
    void keep(const std::string& id, Stored& stored, boost::json::object record) const;
    void remove_file(const std::string& id) const;
    void load();

    std::string dir_;  // "": none
    std::map<std::string, Stored> stored_;
};

}  // namespace strata::daemon
