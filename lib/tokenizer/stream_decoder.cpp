// tokenizer/stream_decoder.cpp — incremental detokenizing that holds back unfinished
// UTF-8 sequences (see StreamDecoder in tokenizer.h).
#include "tokenizer/tokenizer.h"
#include "utf8/utf8.h"

namespace strata::tokenizer {

StreamDecoder::StreamDecoder(const Tokenizer& tokenizer, Options options)
    : tokenizer_(&tokenizer), options_(options), strip_pending_(options.at_start && tokenizer.adds_space_prefix()) {}

std::string StreamDecoder::push(int32_t id) {
    std::string_view piece = tokenizer_->piece(id, options_.render_special);
    if (strip_pending_ && id != tokenizer_->bos()) {
        if (!piece.empty() && piece.front() == ' ') piece.remove_prefix(1);
        strip_pending_ = false;
    }
    held_.append(piece);
    size_t complete = held_.size() - utf8::incomplete_tail(held_);
    std::string out = release(std::string_view(held_).substr(0, complete));
    held_.erase(0, complete);
    return out;
}

std::string StreamDecoder::flush() {
    std::string out = release(held_);
    held_.clear();
    return out;
}

std::string StreamDecoder::release(std::string_view text) {
    return options_.replace_invalid ? utf8::replace_invalid(text) : std::string(text);
}

}  // namespace strata::tokenizer
