// tests/unit/test_main.cpp — the Boost.Test runner shared by every unit test executable.
#define BOOST_TEST_MODULE strata
#include <boost/test/unit_test.hpp>
