// tests/unit/scheduler_test.cpp — the engine step's plan without a model: admission order
// across users, limits.max_running_per_user, KV admission and waiting, eviction order,
// deadlines and cancels, prompt chunks beside running decodes, and several positions'
// logits of one request.
#include <boost/test/unit_test.hpp>

#include <algorithm>

#include "engine/engine.h"
#include "engine/scheduler.h"

using namespace strata::engine;

namespace {

const Clock::time_point t0 = Clock::now();
constexpr auto never = Clock::time_point::max();

Limits limits(int32_t per_user = 8, int32_t queued = 64) {
    Limits l;
    l.max_running_per_user = per_user;
    l.max_queued = queued;
    return l;
}

KvView room(uint64_t budget, uint64_t used = 0, std::vector<Evictable> lru = {}) { return {budget, used, std::move(lru)}; }

Prepared prompt(int32_t tokens, uint64_t kv_bytes = 0) { return {kv_bytes, tokens, false, true}; }

// Reports every request prepared with `p`: they are then ready for KV.
void prepare_all(Scheduler& s, const std::vector<uint64_t>& handles, const Prepared& p) {
    for (const uint64_t h : handles) s.prepared(h, p);
}


}  // namespace

BOOST_AUTO_TEST_SUITE(scheduler)

BOOST_AUTO_TEST_CASE(one_users_burst_does_not_go_before_another_users_request) {
    Scheduler s(limits(), 512);
    for (uint64_t h = 1; h <= 4; ++h) s.submit(h, 1000, t0, never);
    s.submit(5, 2000, t0, never);
    const StepPlan p = s.plan(t0, room(0));
    BOOST_TEST(p.prepare == (std::vector<uint64_t>{1, 5, 2, 3, 4}), "one per user a round, oldest first");
}

BOOST_AUTO_TEST_CASE(a_user_runs_at_most_max_running_per_user) {
    Scheduler s(limits(2), 512);
    for (uint64_t h = 1; h <= 4; ++h) s.submit(h, 1000, t0, never);
    BOOST_TEST(s.plan(t0, room(0)).prepare == (std::vector<uint64_t>{1, 2}));
    BOOST_TEST(s.queued() == 2);
    BOOST_TEST(s.plan(t0, room(0)).prepare.empty(), "the others wait their turn");
    s.remove(1);
    BOOST_TEST(s.plan(t0, room(0)).prepare == (std::vector<uint64_t>{3}));
}

BOOST_AUTO_TEST_CASE(the_queue_refuses_past_max_queued) {
    Scheduler s(limits(8, 2), 512);
    s.submit(1, 0, t0, never);
    s.check_room();
    s.submit(2, 0, t0, never);
    BOOST_CHECK_THROW(s.check_room(), EngineError);
    s.remove(1);
    s.check_room();
}

BOOST_AUTO_TEST_CASE(kv_that_does_not_fit_waits_for_a_running_request_to_end) {
    Scheduler s(limits(), 512);
    s.submit(1, 1000, t0, never);
    s.submit(2, 2000, t0, never);
    s.plan(t0, room(100));
    prepare_all(s, {1, 2}, prompt(4, 60));
    BOOST_TEST(s.wants_kv());
    const StepPlan first = s.plan(t0, room(100));
    BOOST_TEST(first.admit == (std::vector<uint64_t>{1}));
    BOOST_TEST(s.queued() == 1, "the second waits, counted as queued");
    // The running request holds its 60 bytes now.
    BOOST_TEST(s.plan(t0, room(100, 60)).admit.empty());
    s.remove(1);
    BOOST_TEST(s.plan(t0, room(100, 0)).admit == (std::vector<uint64_t>{2}));
}

BOOST_AUTO_TEST_CASE(with_nothing_running_a_request_runs_even_over_the_budget) {
    Scheduler s(limits(), 512);
    s.submit(1, 1000, t0, never);
    s.plan(t0, room(100));
    s.prepared(1, prompt(4, 60));
    const StepPlan p = s.plan(t0, room(100, 90, {{Evictable::Kind::Prefix, 0, 1, 10}}));
    BOOST_TEST(p.admit == (std::vector<uint64_t>{1}));
    BOOST_TEST(p.evict.size() == 1u, "after evicting all it can");
}

BOOST_AUTO_TEST_CASE(eviction_takes_the_least_recently_used_until_the_request_fits) {
    Scheduler s(limits(), 512);
    s.submit(1, 1000, t0, never);
    s.submit(2, 1000, t0, never);
    s.plan(t0, room(100));
    s.prepared(1, prompt(4, 10));
    s.plan(t0, room(100));  // 1 runs
    s.prepared(2, prompt(4, 35));
    const std::vector<Evictable> lru{{Evictable::Kind::Prefix, 0, 1, 10},
                                     {Evictable::Kind::Session, 7, 2, 30},
                                     {Evictable::Kind::Prefix, 0, 3, 50}};
    const StepPlan p = s.plan(t0, room(100, 90, lru));
    BOOST_TEST(p.admit == (std::vector<uint64_t>{2}));
    BOOST_TEST_REQUIRE(p.evict.size() == 2u, "10 + 30 bytes free the 25 it lacks; the newest stays");
    BOOST_TEST(p.evict[0].tick == 1u);
    BOOST_TEST(p.evict[1].id == 7u);
}

BOOST_AUTO_TEST_CASE(when_kv_is_short_the_user_with_fewest_running_goes_first) {
    Scheduler s(limits(), 512);
    s.submit(1, 1000, t0, never);
    s.plan(t0, room(100));
    s.prepared(1, prompt(4, 10));
    s.plan(t0, room(100));  // user 1000 runs one
    s.submit(2, 1000, t0, never);
    s.submit(3, 2000, t0 + std::chrono::seconds(1), never);
    s.plan(t0, room(100, 10));
    prepare_all(s, {2, 3}, prompt(4, 50));
    BOOST_TEST(s.plan(t0, room(100, 40)).admit == (std::vector<uint64_t>{3}), "room for one: the other user's");
}

BOOST_AUTO_TEST_CASE(deadlines_cancels_and_the_end_of_the_grace_time_end_requests_wherever_they_are) {
    Scheduler s(limits(1), 512);
    s.submit(1, 1000, t0, t0 + std::chrono::milliseconds(5));  // will run
    s.submit(2, 1000, t0, t0 + std::chrono::milliseconds(5));  // queued behind it
    s.submit(3, 2000, t0, never);
    s.plan(t0, room(0));
    s.cancel(3);
    const StepPlan p = s.plan(t0 + std::chrono::milliseconds(6), room(0));
    BOOST_TEST_REQUIRE(p.end.size() == 3u);
    BOOST_TEST(p.end[0].reason == std::string("timeout"));
    BOOST_TEST(p.end[1].reason == std::string("timeout"));
    BOOST_TEST(p.end[2].reason == std::string("cancelled"));
    BOOST_TEST(s.running() + s.queued() == 0);

    s.submit(4, 1000, t0, never);
    s.stop(t0 + std::chrono::seconds(1));
    BOOST_TEST(s.plan(t0, room(0)).end.empty(), "the grace time has not run out");
    BOOST_TEST(s.plan(t0 + std::chrono::seconds(2), room(0)).end.size() == 1u);
    BOOST_TEST(s.done());
}

BOOST_AUTO_TEST_CASE(prompt_chunks_fill_the_pass_beside_running_decodes) {
    Scheduler s(limits(), 8);
    s.submit(1, 1000, t0, never);
    s.submit(2, 2000, t0, never);
    s.plan(t0, room(0));
    s.prepared(1, prompt(1));
    s.prepared(2, prompt(20));
    StepPlan p = s.plan(t0, room(0));
    BOOST_TEST(p.admit == (std::vector<uint64_t>{1, 2}));
    BOOST_TEST_REQUIRE(p.batch.size() == 2u);
    BOOST_TEST((p.batch[0].handle == 1 && p.batch[0].tokens == 1 && p.batch[0].logits == LogitsAt::Last));
    BOOST_TEST((p.batch[1].handle == 2 && p.batch[1].tokens == 7 && p.batch[1].logits == LogitsAt::None));
    s.feed_next(1, 1, true);  // 1 decodes now
    s.feed_next(2, 13, false);
    p = s.plan(t0, room(0));
    BOOST_TEST_REQUIRE(p.batch.size() == 2u);
    BOOST_TEST((p.batch[0].handle == 1 && p.batch[0].tokens == 1), "decodes go first");
    BOOST_TEST((p.batch[1].handle == 2 && p.batch[1].tokens == 7 && p.batch[1].logits == LogitsAt::None));
    s.feed_next(2, 6, false);
    p = s.plan(t0, room(0));
    BOOST_TEST((p.batch[1].tokens == 6 && p.batch[1].logits == LogitsAt::Last), "the prompt's last chunk has logits");
}

BOOST_AUTO_TEST_CASE(a_request_can_ask_for_logits_at_several_positions) {
    Scheduler s(limits(), 8);
    s.submit(1, 1000, t0, never);
    s.plan(t0, room(0));
    s.prepared(1, prompt(1));
    s.plan(t0, room(0));
    s.feed_next(1, 5, true);  // its token and four guesses to verify
    const StepPlan p = s.plan(t0, room(0));
    BOOST_TEST_REQUIRE(p.batch.size() == 1u);
    BOOST_TEST(p.batch[0].tokens == 5);
    BOOST_TEST((p.batch[0].logits == LogitsAt::All));
}

BOOST_AUTO_TEST_CASE(a_prompt_that_must_go_whole_waits_for_a_pass_with_room) {
    Scheduler s(limits(), 8);
    s.submit(1, 1000, t0, never);
    s.submit(2, 2000, t0, never);
    s.plan(t0, room(0));
    s.prepared(1, prompt(3));
    s.prepared(2, {0, 6, true, false});
    StepPlan p = s.plan(t0, room(0));
    BOOST_TEST_REQUIRE(p.batch.size() == 1u, "3 + 6 > 8: the whole one waits");
    BOOST_TEST(p.batch[0].handle == 1u);
    s.feed_next(1, 1, true);
    p = s.plan(t0, room(0));
    BOOST_TEST_REQUIRE(p.batch.size() == 2u);
    BOOST_TEST((p.batch[1].handle == 2 && p.batch[1].tokens == 6 && p.batch[1].logits == LogitsAt::None));
}

BOOST_AUTO_TEST_SUITE_END()
