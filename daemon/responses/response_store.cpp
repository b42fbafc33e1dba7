// daemon/responses/response_store.cpp — stored responses, in memory and on disk (see response_store.h).
#include "responses/response_store.h"

#include <sys/stat.h>

#include <boost/json/serialize.hpp>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "engine/state_dir.h"
#include "host/log.h"
#include "protocol/errors.h"
#include "protocol/json_text.h"

namespace strata::daemon {
namespace json = boost::json;
namespace fs = std::filesystem;
namespace {

constexpr const char* kSubdir = "/responses";
constexpr const char* kExtension = ".json";
constexpr unsigned kMaxFileDepth = 1024;  // stored items nest no deeper than requests may

int64_t now() { return static_cast<int64_t>(std::time(nullptr)); }

ApiError not_found(const std::string& id) {
    return ApiError(ErrorKind::SessionNotFound, "no stored response \"" + id + "\"", "response_id");
}

json::object read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in)
        throw std::runtime_error("cannot read it");
    return parse_json_text(text.str(), kMaxFileDepth, "the file").as_object();
}

// Made when the first response is stored (mode 0700, as the state directory).
void make_private_directory(const std::string& dir) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec)
        throw std::system_error(ec, "cannot make " + dir);
    if (::chmod(dir.c_str(), 0700) != 0)
        throw std::system_error(errno, std::generic_category(), "cannot make " + dir + " private");
}

}  // namespace

ResponseStore::ResponseStore(const std::string& state_dir) {
    if (state_dir.empty())
        return;
    dir_ = state_dir + kSubdir;
    std::error_code ec;
    if (fs::is_directory(dir_, ec))
        load();
}

void ResponseStore::load() {
    std::error_code ec;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir_, ec)) {
        const fs::path& path = entry.path();
        if (path.extension() != kExtension)
            continue;
        try {
            const json::object file = read_file(path.string());
            const std::string id(file.at("response").at("id").as_string());
            if (id + kExtension != path.filename().string())
                throw std::runtime_error("its response id is " + id);
            stored_.emplace(id, Stored{static_cast<uint32_t>(file.at("uid").to_number<int64_t>()),
                                       file.at("last_used").to_number<int64_t>(), {}});
        } catch (const std::exception& error) {
            log::warning("skipping the stored response ", path.string(), ": ", error.what());
        }
    }
    if (ec)
        log::warning("cannot read ", dir_, ": ", ec.message());
}

void ResponseStore::keep(const std::string& id, Stored& stored, json::object record) const {
    stored.record = {};
    if (!dir_.empty()) {
        const std::string text = json::serialize(json::object{
            {"uid", stored.uid}, {"last_used", stored.last_used}, {"items", record.at("items")}, {"response", record.at("response")}});
        try {
            make_private_directory(dir_);
            engine::write_file_durably(dir_, id + kExtension, [&](std::FILE* file) {
                if (std::fwrite(text.data(), 1, text.size(), file) != text.size())
                    throw std::system_error(errno, std::generic_category(), "cannot write");
            });
            return;
        } catch (const std::exception& error) {
            log::warning("the response ", id, " is kept in memory only: ", error.what());
        }
    }
    stored.record = std::move(record);
}

json::object ResponseStore::record_of(const std::string& id, const Stored& stored) const {
    if (!stored.record.empty())
        return stored.record;
    try {
        json::object file = read_file(dir_ + "/" + id + kExtension);
        return {{"items", std::move(file.at("items"))}, {"response", std::move(file.at("response"))}};
    } catch (const std::exception& error) {
        throw ApiError(ErrorKind::Internal, "cannot read the stored response " + id + ": " + error.what());
    }
}

void ResponseStore::remove_file(const std::string& id) const {
    std::error_code ec;
    if (!dir_.empty())
        fs::remove(dir_ + "/" + id + kExtension, ec);
}

void ResponseStore::expire(int64_t idle_timeout_s) {
    if (idle_timeout_s <= 0)
        return;
    const int64_t t = now();
    for (auto it = stored_.begin(); it != stored_.end();) {
        if (t - it->second.last_used < idle_timeout_s) {
            ++it;
            continue;
        }
        remove_file(it->first);
        it = stored_.erase(it);
    }
}

ResponseStore::Stored* ResponseStore::find(uint32_t uid, const std::string& id, int64_t idle_timeout_s) {
    expire(idle_timeout_s);
    const auto it = stored_.find(id);
    return it != stored_.end() && (uid == 0 || it->second.uid == uid) ? &it->second : nullptr;
}

void ResponseStore::put(uint32_t uid, const json::object& response, json::array context) {
    const std::string id(response.at("id").as_string());
    for (const json::value& item : response.at("output").as_array())  // output items read as input items
        context.push_back(item);
    Stored& stored = stored_[id] = Stored{uid, now(), {}};
    keep(id, stored, json::object{{"items", std::move(context)}, {"response", response}});
}

json::object ResponseStore::get(uint32_t uid, const std::string& id, int64_t idle_timeout_s) {
    const Stored* stored = find(uid, id, idle_timeout_s);
    if (stored == nullptr)
        throw not_found(id);
    return record_of(id, *stored).at("response").as_object();
}

json::array ResponseStore::continuation(uint32_t uid, const std::string& id, int64_t idle_timeout_s) {
    Stored* stored = find(uid, id, idle_timeout_s);
    if (stored == nullptr)
        throw invalid_params("previous_response_id", "previous_response_id: no stored response \"" + id + "\"");
    json::object record = record_of(id, *stored);
    json::array items = record.at("items").as_array();
    stored->last_used = now();
    keep(id, *stored, std::move(record));
    return items;
}

void ResponseStore::erase(uint32_t uid, const std::string& id, int64_t idle_timeout_s) {
    if (find(uid, id, idle_timeout_s) == nullptr)
        throw not_found(id);
    stored_.erase(id);
    remove_file(id);
}

}  // namespace strata::daemon
