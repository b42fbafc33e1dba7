// tests/unit/test_util.h — where test data lives, reading it, and skipping tests whose data is absent.
#pragma once

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace strata::test {

// ../shared (tests needing it skip when absent), this source tree, and tests/data.
inline std::filesystem::path shared_dir() {
    const char* s = std::getenv("STRATA_SHARED_DIR");
    return s ? s : "../shared";
}
inline std::filesystem::path source_dir() {
    const char* s = std::getenv("STRATA_SOURCE_DIR");
    return s ? s : ".";
}
inline std::filesystem::path data_dir() { return source_dir() / "tests" / "data"; }

// A whole file's bytes; the test fails when it cannot be opened.
inline std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    BOOST_REQUIRE_MESSAGE(in, "cannot open " << path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// A Boost.Test precondition: the test runs only when `path` exists, and is reported as
// skipped with a message otherwise.
struct needs_path {
    std::filesystem::path path;
    boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
        boost::test_tools::assertion_result r(std::filesystem::exists(path));
        if (!r) r.message() << "skipped: " << path.string() << " is absent";
        return r;
    }
};
// ... `rel` under ../shared;
inline boost::unit_test::decorator::precondition shared(std::string rel) { return boost::unit_test::precondition(needs_path{shared_dir() / rel}); }
// ... `rel` under the npm packages tests/clients pins (installed by .ci/install-deps).
inline std::filesystem::path npm_dir() { return source_dir() / "tests" / "clients" / "node_modules"; }
inline boost::unit_test::decorator::precondition npm(std::string rel) { return boost::unit_test::precondition(needs_path{npm_dir() / rel}); }

}  // namespace strata::test
