// tokenizer/layouts.h — the token layouts llama.cpp's server builds around text, so that a
// model sees what it sees there: fill-in-the-middle prompts (/infill: the repo-level pattern
// with the file and repository separators when the vocabulary has them) and query/document
// pairs for cross-encoder rerankers (/rerank).
// Must not touch: the encoding algorithms, chat templates (chat/), requests (engine/).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace strata::tokenizer {

struct InfillFile {
    std::string filename = "tmp";
    std::string text;
};

// What surrounds the gap: the text before and after it, other files for context, and the
// start of the middle already typed (`prompt`, its special tokens parsed).
struct InfillInput {
    std::string prefix, suffix, prompt;
    std::vector<InfillFile> extra;
};

// How much of each part is kept, as llama.cpp's server keeps it: the prefix's last
// 3/4 x batch tokens, the suffix's first batch/4 - 2 - prompt tokens, and the extra files'
// last context - batch - 2 x predict tokens.
struct InfillBudget {
    int32_t batch = 512, predict = 0, context = 0;
};

// Why the vocabulary cannot fill in the middle ("prefix token is missing. ..."), or "".
std::string missing_fim_tokens(const Tokenizer& tokenizer);

// [extra: <REP>myproject\n, then per file <SEP>filename\n text (or "\n\n--- snippet ---\n\n"
// text without a file separator), <SEP>filename\n] [BOS] <PRE> prefix prompt <SUF> suffix <MID>.
// Throws TokenizerError (missing_fim_tokens) when the vocabulary lacks a FIM token.
std::vector<int32_t> infill_tokens(const Tokenizer& tokenizer, const InfillInput& input, InfillBudget budget);

// A query and a document as one input of a cross-encoder (PairTokens, tokenizer.h).
std::vector<int32_t> pair_tokens(const Tokenizer& tokenizer, const std::string& query, const std::string& document);

}  // namespace strata::tokenizer
