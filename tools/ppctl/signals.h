// SPDX-License-Identifier: GPL-2.0
// ppctl: SIGINT and SIGTERM end a streaming command cleanly (exit 0, output
// flushed).  They stay blocked except while we wait, so none is lost
// between a check and a sleep.
#pragma once

#include <cerrno>
#include <chrono>
#include <csignal>
#include <ctime>
#include <optional>
#include <vector>

#include <poll.h>

#include "ppkit/error.h"

namespace ppctl {

namespace detail {
inline volatile std::sig_atomic_t g_stop = 0;
inline void on_signal(int)
{
	g_stop = 1;
}
}  // namespace detail

class Signals {
public:
	Signals()
	{
		detail::g_stop = 0;
		sigset_t s;
		sigemptyset(&s);
		sigaddset(&s, SIGINT);
		sigaddset(&s, SIGTERM);
		sigprocmask(SIG_BLOCK, &s, &old_mask_);
		struct sigaction sa {};
		sa.sa_handler = detail::on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, &old_int_);
		sigaction(SIGTERM, &sa, &old_term_);
	}
	~Signals()
	{
		sigaction(SIGINT, &old_int_, nullptr);
		sigaction(SIGTERM, &old_term_, nullptr);
		sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
	}
	Signals(const Signals &) = delete;
	Signals &operator=(const Signals &) = delete;

	bool stopped() const { return detail::g_stop != 0; }

	// Wait for @fds or until @deadline (none: forever).  Returns the
	// number of ready fds, 0 on timeout, -1 when asked to stop.
	int wait(std::vector<pollfd> &fds,
		 std::optional<std::chrono::steady_clock::time_point> deadline)
	{
		for (;;) {
			if (detail::g_stop)
				return -1;
			timespec ts{}, *tsp = nullptr;
			if (deadline) {
				auto left = *deadline - std::chrono::steady_clock::now();
				if (left <= std::chrono::steady_clock::duration::zero())
					return 0;
				auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
				ts.tv_sec = ns / 1000000000;
				ts.tv_nsec = ns % 1000000000;
				tsp = &ts;
			}
			int r = ppoll(fds.data(), fds.size(), tsp, &old_mask_);
			if (r >= 0 && !detail::g_stop)
				return r;
			if (r < 0 && errno != EINTR)
				throw ppkit::Error(ppkit::Errc::System, "poll failed", errno);
		}
	}

private:
	sigset_t old_mask_{};
	struct sigaction old_int_ {}, old_term_ {};
};

}  // namespace ppctl
