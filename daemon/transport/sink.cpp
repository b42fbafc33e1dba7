// daemon/transport/sink.cpp — the Sink that posts engine events to the io_context (see sink.h).
#include "transport/sink.h"

#include <boost/asio/post.hpp>

namespace strata::daemon {
namespace {

class PostingSink final : public engine::Sink {
public:
    PostingSink(asio::io_context& io, std::weak_ptr<RequestListener> listener, uint64_t key)
        : io_(io), listener_(std::move(listener)), key_(key) {}

    void on_text(std::string_view piece) override {
        deliver([text = std::string(piece)](RequestListener& l, uint64_t key) mutable { l.on_text(key, std::move(text)); });
    }
    void on_logprobs(const engine::TokenLogprobs& logprobs) override {
        deliver([logprobs](RequestListener& l, uint64_t key) mutable { l.on_logprobs(key, std::move(logprobs)); });
    }
    void on_done(const engine::Result& result) override {
        deliver([result](RequestListener& l, uint64_t key) mutable { l.on_done(key, std::move(result)); });
    }
    void on_error(const engine::EngineError& error) override {
        deliver([error = from_engine(error)](RequestListener& l, uint64_t key) mutable { l.on_error(key, std::move(error)); });
    }

private:
    template <typename Event>
    void deliver(Event event) {
        asio::post(io_, [listener = listener_, key = key_, event = std::move(event)]() mutable {
            if (auto alive = listener.lock())
                event(*alive, key);
        });
    }

    asio::io_context& io_;
    std::weak_ptr<RequestListener> listener_;
    uint64_t key_;
};

}  // namespace

std::shared_ptr<engine::Sink> make_posting_sink(asio::io_context& io, std::weak_ptr<RequestListener> listener,
                                                uint64_t key) {
    return std::make_shared<PostingSink>(io, std::move(listener), key);
}

}  // namespace strata::daemon
