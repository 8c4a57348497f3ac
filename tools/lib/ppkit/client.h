// SPDX-License-Identifier: GPL-2.0
// libppkit: the netlink client of ppkit tools.
//
//   ppkit::Client c;                      // the ppkit family (pp_backport)
//   for (const ppkit::Pool &p : c.pools()) ...
//   auto samples = c.sample();            // pools with their statistics
//   auto w = ppkit::window(before, after); // rates (rates.h)
//
// Errors are ppkit::Error (error.h), with a category and a message that
// says what to do next.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "ppkit/error.h"
#include "ppkit/holders.h"
#include "ppkit/rates.h"
#include "ppkit/types.h"

namespace ppkit {

namespace detail {
class Backend;
}

// Which pools a sample covers: the listed ids (all if none), on one
// interface if @ifindex is set.
struct Filter {
	std::vector<std::uint32_t> ids;
	std::optional<std::uint32_t> ifindex;
};

class Client {
public:
	// Connects to @source's family.  Error(FamilyMissing) if the kernel has
	// none: for Source::Ppkit, pp_backport is not loaded.
	explicit Client(Source source = Source::Ppkit);
	~Client();
	Client(Client &&) noexcept;
	Client &operator=(Client &&) noexcept;

	Source source() const;

	// Every pool (dump), or one (Error(NoSuchPool) if there is none).
	std::vector<Pool> pools();
	Pool pool(std::uint32_t id);

	// Statistics of every pool (of one interface), or of one pool.
	// Error(NotSupported) if this kernel keeps none (the netdev family
	// without CONFIG_PAGE_POOL_STATS): check has_stats() first to avoid it.
	std::vector<Stats> stats(std::optional<std::uint32_t> ifindex = std::nullopt);
	Stats stats(std::uint32_t id);
	// Whether the kernel reports page_pool statistics (asks it once).
	bool has_stats();
	// Whether stats() asks for Counter::LentHeld and LentOldestMs (on by
	// default; the ppkit family only): a pass over every pool's lent pages
	// in the kernel, which a caller sampling often may want to space out.
	void set_lent_ages(bool on);

	// Pool descriptions and statistics taken together.  Without statistics
	// (has_stats() false) every sample's Stats is empty.
	std::vector<Sample> sample(const Filter &filter = {});

	// pool-set (CAP_NET_ADMIN); returns the pool as it is afterwards.  The
	// kernel is the authority on limits: its extack message is in the Error.
	Pool set(std::uint32_t id, const PoolSettings &settings);

	// holders-get (CAP_NET_ADMIN): where pool @id's pages are and which
	// sockets hold them.  Error(NotSupported) for the netdev family.
	Holders holders(std::uint32_t id);

private:
	std::unique_ptr<detail::Backend> impl_;
};

// Pool notifications as they happen.
class Monitor {
public:
	// Joins @source's notification group; Error(FamilyMissing) or
	// Error(Permission) if it cannot.
	explicit Monitor(Source source = Source::Ppkit);
	~Monitor();
	Monitor(Monitor &&) noexcept;
	Monitor &operator=(Monitor &&) noexcept;

	Source source() const;

	// The notification socket's receive buffer: kBuffer bytes are asked
	// for with SO_RCVBUFFORCE (CAP_NET_ADMIN); without the capability the
	// kernel caps SO_RCVBUF at net.core.rmem_max, @forced is false and
	// @bytes says what it gave.  A burst of pool changes overruns a small
	// buffer sooner (read() reports it).
	static constexpr std::size_t kBuffer = 4 << 20;
	struct Buffer {
		std::size_t bytes = 0;
		bool forced = false;
	};
	Buffer buffer() const;
	// To poll() for readability.
	int fd() const;
	// The events that arrived; blocks until one does unless fd() is
	// readable.  @lost is set when the kernel dropped events (the socket
	// buffer overran): the reader should re-read the pool list.
	std::vector<Event> read(bool *lost = nullptr);

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

// Clock offset CLOCK_REALTIME - CLOCK_BOOTTIME in ns, now.
std::int64_t boot_to_realtime_ns();
// The name of interface @ifindex, "" if there is none.
std::string ifname(std::uint32_t ifindex);

}  // namespace ppkit
