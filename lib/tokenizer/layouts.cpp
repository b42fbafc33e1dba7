// tokenizer/layouts.cpp — fill-in-the-middle prompts and query/document pairs (see layouts.h).
#include "tokenizer/layouts.h"

#include <algorithm>

namespace strata::tokenizer {
namespace {

void append(std::vector<int32_t>& out, const std::vector<int32_t>& tokens) { out.insert(out.end(), tokens.begin(), tokens.end()); }

// The repository header and the extra files, before the prefix.
std::vector<int32_t> extra_tokens(const Tokenizer& t, const InfillInput& input) {
    const FimTokens& fim = t.fim();
    std::vector<int32_t> out;
    if (fim.rep >= 0) {
        out.push_back(fim.rep);
        append(out, t.encode("myproject\n", false, false));
    }
    for (const InfillFile& file : input.extra) {
        if (fim.sep >= 0) {
            out.push_back(fim.sep);
            append(out, t.encode(file.filename + "\n", false, false));
        } else {
            append(out, t.encode("\n\n--- snippet ---\n\n", false, false));
        }
        append(out, t.encode(file.text, false, false));
    }
    if (fim.sep >= 0) {
        out.push_back(fim.sep);
        append(out, t.encode("filename\n", false, false));
    }
    return out;
}

}  // namespace

std::string missing_fim_tokens(const Tokenizer& tokenizer) {
    const FimTokens& fim = tokenizer.fim();
    std::string missing;
    if (fim.pre < 0) missing += "prefix token is missing. ";
    if (fim.suf < 0) missing += "suffix token is missing. ";
    if (fim.mid < 0) missing += "middle token is missing. ";
    return missing;
}

std::vector<int32_t> infill_tokens(const Tokenizer& t, const InfillInput& input, InfillBudget budget) {
    if (const std::string missing = missing_fim_tokens(t); !missing.empty())
        throw TokenizerError("Infill is not supported by this model: " + missing);
    const FimTokens& fim = t.fim();
    std::vector<int32_t> prefix = t.encode(input.prefix, false, false);
    std::vector<int32_t> suffix = t.encode(input.suffix, false, false);
    const std::vector<int32_t> prompt = t.encode(input.prompt, false, true);
    const std::vector<int32_t> extra = extra_tokens(t, input);

    const auto keep_prefix = std::min<size_t>(prefix.size(), static_cast<size_t>(3 * (budget.batch / 4)));
    const auto keep_suffix = std::min<size_t>(
        suffix.size(), static_cast<size_t>(std::max<int64_t>(0, budget.batch / 4 - (2 + static_cast<int64_t>(prompt.size())))));
    const auto keep_extra = std::min<size_t>(
        extra.size(), static_cast<size_t>(std::max<int64_t>(0, int64_t(budget.context) - budget.batch - 2 * int64_t(budget.predict))));

    std::vector<int32_t> out(extra.end() - static_cast<std::ptrdiff_t>(keep_extra), extra.end());
    if (t.add_bos() && t.bos() >= 0) out.push_back(t.bos());
    out.push_back(fim.pre);
    out.insert(out.end(), prefix.end() - static_cast<std::ptrdiff_t>(keep_prefix), prefix.end());
    append(out, prompt);
    out.push_back(fim.suf);
    out.insert(out.end(), suffix.begin(), suffix.begin() + static_cast<std::ptrdiff_t>(keep_suffix));
    out.push_back(fim.mid);
    return out;
}

std::vector<int32_t> pair_tokens(const Tokenizer& t, const std::string& query, const std::string& document) {
    const PairTokens p = t.pair();
    std::vector<int32_t> out;
    if (p.add_bos && p.bos >= 0) out.push_back(p.bos);
    append(out, t.encode(query, false, false));
    if (p.add_eos && p.eos >= 0) out.push_back(p.eos);
    if (p.add_sep && p.sep >= 0) out.push_back(p.sep);
    append(out, t.encode(document, false, false));
    if (p.add_eos && p.eos >= 0) out.push_back(p.eos);
    return out;
}

}  // namespace strata::tokenizer
