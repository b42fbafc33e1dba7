// tests/unit/utf8_test.cpp — lib/utf8 alone (it links nothing else): strict validation,
// decoding and encoding, replacement of invalid bytes, the incomplete tail, Latin-1.
#include <string>

#include "test_util.h"
#include "utf8/utf8.h"

using namespace strata;

BOOST_AUTO_TEST_CASE(validation_is_strict) {
    BOOST_TEST(utf8::is_valid("plain \xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
    BOOST_TEST(!utf8::is_valid("\xC0\xAF"));          // overlong
    BOOST_TEST(!utf8::is_valid("\xE0\x80\xAF"));      // overlong
    BOOST_TEST(!utf8::is_valid("\xED\xA0\x80"));      // surrogate
    BOOST_TEST(!utf8::is_valid("\xF4\x90\x80\x80"));  // past U+10FFFF
    BOOST_TEST(!utf8::is_valid("\xE2\x82"));          // cut short
    BOOST_TEST(*utf8::first_invalid("ab\xC3\xA9\x80") == 4u);
    BOOST_TEST(!utf8::first_invalid("").has_value());
    BOOST_TEST(utf8::sequence_length(0xF0) == 4u);
    BOOST_TEST(utf8::sequence_length(0x80) == 0u);
    BOOST_TEST(utf8::valid_prefix_length("\xE2\x82x", 0) == 2u);
    BOOST_TEST(utf8::valid_length("\xE2\x82\xAC", 0) == 3u);
}

BOOST_AUTO_TEST_CASE(code_points_round_trip) {
    const std::string text = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";
    BOOST_TEST((utf8::decode(text) == std::u32string{U'a', 0xE9, 0x20AC, 0x1F600}));
    BOOST_TEST(utf8::encode(utf8::decode(text)) == text);
    BOOST_TEST(utf8::decode(text, 3, 3) == 0x20ACu);
    // Each byte that starts no valid sequence is one U+FFFD.
    BOOST_TEST((utf8::decode("\xE2\x82x") == std::u32string{0xFFFD, 0xFFFD, U'x'}));
}

BOOST_AUTO_TEST_CASE(replacement_and_the_incomplete_tail) {
    BOOST_TEST(utf8::replace_invalid("ok") == "ok");
    // One U+FFFD per maximal invalid subpart: the cut-short "\xE2\x82" is one.
    BOOST_TEST(utf8::replace_invalid("a\xE2\x82" "b\xFF") == "a\xEF\xBF\xBD" "b\xEF\xBF\xBD");
    BOOST_TEST(utf8::incomplete_tail("ab\xE2\x82") == 2u);
    BOOST_TEST(utf8::incomplete_tail("ab\xE2\x82\xAC") == 0u);
    BOOST_TEST(utf8::incomplete_tail("ab\xC0") == 0u);
    BOOST_TEST(utf8::from_latin1("caf\xE9") == "caf\xC3\xA9");
}
