// SPDX-License-Identifier: GPL-2.0
#include "metrics.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <stdexcept>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include <CivetServer.h>
#include <fmt/format.h>
#include <zlib.h>

#include "ppkit/json_writer.h"

namespace ppctld {

namespace {

// Series a ppkit pool does not export because they follow from others
// (Documentation/stats.rst): alloc_fast is served minus the other
// allocation counters, the ring level is recycle_ring - ring_consumed.  The
// netdev family's pools count alloc_fast themselves and have no ring gauge.
bool derived(ppkit::Source src, ppkit::Counter c)
{
	return src == ppkit::Source::Ppkit &&
	       (c == ppkit::Counter::AllocFast || c == ppkit::Counter::RingPages);
}

bool held_pages(const ppkit::Stats &s)
{
	return s.has(ppkit::Counter::LentHeld) && s.get(ppkit::Counter::LentHeld) != 0;
}

const char *counter_help(ppkit::Counter c)
{
	using C = ppkit::Counter;
	switch (c) {
	case C::AllocFast: return "Allocations served from the pool's lockless cache (upstream alloc_fast).";
	case C::AllocSlow: return "Slow-path allocation calls (upstream alloc_slow).";
	case C::AllocSlowHighOrder: return "Slow-path allocations of order > 0 (upstream alloc_slow_high_order).";
	case C::AllocEmpty: return "Allocations that found the ring empty (upstream alloc_empty).";
	case C::AllocRefill: return "Cache refills from the ring (upstream alloc_refill).";
	case C::AllocWaive: return "Ring pages refused for the cache, e.g. far NUMA node (upstream alloc_waive).";
	case C::RecycleCached: return "Pages recycled into the cache (upstream recycle_cached).";
	case C::RecycleCacheFull: return "Recycles that found the cache full (upstream recycle_cache_full).";
	case C::RecycleRing: return "Pages recycled into the ring (upstream recycle_ring).";
	case C::RecycleRingFull: return "Recycles that found the ring full (upstream recycle_ring_full).";
	case C::RecycleReleasedRefcnt: return "Pages released because others held a reference (upstream recycle_released_refcnt).";
	case C::LentHeld: return "Pages lent to the stack that it still holds (in skbs, not let go).";
	case C::LentOldestMs: return "How long the stack has held the oldest page it holds, in seconds (absent while it holds none).";
	default: return "ppkit page counter; see Documentation/stats.rst.";
	}
}

// The series name of counter @i.
std::string counter_name(std::size_t i)
{
	auto c = static_cast<ppkit::Counter>(i);
	if (c == ppkit::Counter::InflightMem)
		return "ppkit_pool_inflight_bytes";
	if (c == ppkit::Counter::Inflight)
		return "ppkit_pool_inflight_pages";
	if (c == ppkit::Counter::LentHeld)
		return "ppkit_pool_lent_held_pages";
	if (c == ppkit::Counter::LentOldestMs)
		return "ppkit_pool_lent_oldest_seconds";
	std::string n = "ppkit_pool_" + std::string(ppkit::name(c));
	return ppkit::is_gauge(i) ? n : n + "_total";
}

// Text in a buffer, handed on at line ends once a piece is full.
class Writer {
public:
	explicit Writer(const std::function<void(std::string_view)> &sink) : sink_(sink) {}

	void family(std::string_view name, std::string_view help, std::string_view type)
	{
		fmt::format_to(out(), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
		line_done();
	}
	// name{pool="ID",source="SRC"[,extra]} value
	template <typename V>
	void pool_sample(std::string_view name, const ppkit::Pool &p, V value,
			 std::string_view extra = {})
	{
		fmt::format_to(out(), "{}{{pool=\"{}\",source=\"{}\"{}}} ", name, p.id,
			       ppkit::to_string(p.source), extra);
		this->value(value);
	}
	void info(const ppkit::Pool &p)
	{
		fmt::format_to(out(), "ppkit_pool_info{{pool=\"{}\",source=\"{}\",owner=\"", p.id,
			       ppkit::to_string(p.source));
		escaped(p.owner);
		buf_.append(std::string_view("\",ifindex=\""));
		if (p.ifindex)
			fmt::format_to(out(), "{}", *p.ifindex);
		buf_.append(std::string_view("\",device=\""));
		escaped(p.ifname);
		buf_.append(std::string_view("\",queue=\""));
		if (p.queue)
			fmt::format_to(out(), "{}", *p.queue);
		fmt::format_to(out(), "\",state=\"{}\"}} ", p.state());
		value(1);
	}
	// name{label="value"} v, or name v without a label.
	template <typename V>
	void sample(std::string_view name, std::string_view label, std::string_view lv, V v)
	{
		buf_.append(name);
		if (!label.empty()) {
			fmt::format_to(out(), "{{{}=\"", label);
			escaped(lv);
			buf_.append(std::string_view("\"}"));
		}
		buf_.push_back(' ');
		value(v);
	}
	void finish()
	{
		if (buf_.size())
			sink_(std::string_view(buf_.data(), buf_.size()));
		buf_.clear();
	}

private:
	std::back_insert_iterator<fmt::memory_buffer> out() { return std::back_inserter(buf_); }

	void value(std::uint64_t v)
	{
		fmt::format_to(out(), "{}\n", v);
		line_done();
	}
	void value(int v) { value(static_cast<std::uint64_t>(v)); }
	void value(double v)
	{
		if (std::isnan(v))
			buf_.append(std::string_view("NaN\n"));
		else if (std::isinf(v))
			buf_.append(std::string_view(v > 0 ? "+Inf\n" : "-Inf\n"));
		else
			fmt::format_to(out(), "{}\n", v);
		line_done();
	}
	// A label value: backslash, double quote and line feed escaped, and
	// valid UTF-8 (Prometheus refuses the whole scrape otherwise): an
	// interface name is whatever bytes root gave it.
	void escaped(std::string_view s)
	{
		std::string valid;
		if (std::any_of(s.begin(), s.end(), [](unsigned char c) { return c >= 0x80; })) {
			valid = ppkit::valid_utf8(s);
			s = valid;
		}
		for (char c : s) {
			if (c == '\\' || c == '"')
				buf_.push_back('\\');
			if (c == '\n') {
				buf_.append(std::string_view("\\n"));
				continue;
			}
			buf_.push_back(c);
		}
	}
	void line_done()
	{
		if (buf_.size() >= kExpositionPiece)
			finish();
	}

	const std::function<void(std::string_view)> &sink_;
	fmt::memory_buffer buf_;
};

}  // namespace

void write_exposition(const Snapshot &s, const std::function<void(std::string_view)> &sink)
{
	Writer w(sink);
	w.family("ppkit_pool_info", "1 for each pool, with its description: owner, device, queue, state.",
		 "gauge");
	for (const Row &r : s.rows)
		w.info(r.pool);

	// One family per counter, then the gauges, in uapi order.
	const std::size_t inflight = ppkit::index(ppkit::Counter::Inflight);
	const std::size_t inflight_mem = ppkit::index(ppkit::Counter::InflightMem);
	for (std::size_t i = 0; i < ppkit::kCounterCount; i++) {
		auto c = static_cast<ppkit::Counter>(i);
		const bool gauge = ppkit::is_gauge(i);
		const std::string name = counter_name(i);
		w.family(name,
			 gauge && !ppkit::is_age_gauge(c) ? "ppkit pool level; see Documentation/stats.rst."
							  : counter_help(c),
			 gauge ? "gauge" : "counter");
		for (const Row &r : s.rows) {
			if (r.stats.present.test(i)) {
				// A counter appears with its first event: of 1,000
				// idle pools' 26 counters most are 0 for their whole life.
				// An age only while a page is held: 1,000 idle
				// pools' 0 s would be 50 kB a scrape of nothing.
				if (c == ppkit::Counter::LentOldestMs) {
					if (held_pages(r.stats))
						w.pool_sample(name, r.pool,
							      static_cast<double>(r.stats.values[i]) / 1000);
				} else if (!derived(r.pool.source, c) &&
					 (gauge || r.stats.values[i] != 0))
					w.pool_sample(name, r.pool, r.stats.values[i]);
				continue;
			}
			// Without page_pool statistics (CONFIG_PAGE_POOL_STATS=n) the
			// netdev family still reports a pool's pages in flight.
			if (i == inflight && r.pool.inflight)
				w.pool_sample(name, r.pool, *r.pool.inflight);
			else if (i == inflight_mem && r.pool.inflight_mem)
				w.pool_sample(name, r.pool, *r.pool.inflight_mem);
		}
	}

	w.family("ppkit_pool_alloc_hit_ratio",
		 "Pages served from recycled stock / all pages served, over the last sample interval.",
		 "gauge");
	for (const Row &r : s.rows)
		if (r.hit)
			w.pool_sample("ppkit_pool_alloc_hit_ratio", r.pool, *r.hit);
	w.family("ppkit_pool_recycle_ratio",
		 "Pages recycled / pages that left the driver, over the last sample interval.",
		 "gauge");
	for (const Row &r : s.rows)
		if (r.recycle)
			w.pool_sample("ppkit_pool_recycle_ratio", r.pool, *r.recycle);
	w.family("ppkit_pool_alert",
		 "1 while an alert rule fires for the pool (rule: low-hit-rate, leak-suspect).",
		 "gauge");
	for (const Row &r : s.rows) {
		w.pool_sample("ppkit_pool_alert", r.pool, r.low_hit ? 1 : 0, ",rule=\"low-hit-rate\"");
		w.pool_sample("ppkit_pool_alert", r.pool, r.leak ? 1 : 0, ",rule=\"leak-suspect\"");
	}

	w.family("ppctld_backend_up", "1 when the source's netlink family is there.", "gauge");
	for (const BackendState &b : s.backends)
		w.sample("ppctld_backend_up", "source", ppkit::to_string(b.source), b.up ? 1 : 0);
	w.family("ppctld_pools", "Live pools followed, by source.", "gauge");
	for (const BackendState &b : s.backends) {
		std::uint64_t n = 0;
		for (const Row &r : s.rows)
			n += r.pool.source == b.source;
		w.sample("ppctld_pools", "source", ppkit::to_string(b.source), n);
	}

	auto one = [&](std::string_view name, std::string_view help, std::string_view type,
		       auto v) {
		w.family(name, help, type);
		w.sample(name, {}, {}, v);
	};
	one("ppctld_samples_total", "Sampling rounds done.", "counter", s.samples);
	one("ppctld_sample_errors_total", "Sampling rounds in which a source failed.", "counter",
	    s.sample_errors);
	one("ppctld_sample_duration_seconds", "How long the last sampling round took.", "gauge",
	    s.last_sample_s);
	one("ppctld_history_bytes", "Memory held by the pools' histories.", "gauge",
	    static_cast<std::uint64_t>(s.history_bytes));
	one("ppctld_alerts_raised_total", "Alerts raised since the daemon started.", "counter",
	    s.alerts_raised);
	w.finish();
}

std::string exposition(const Snapshot &s)
{
	std::string text;
	write_exposition(s, [&](std::string_view piece) { text.append(piece); });
	return text;
}

void write_textfile(const std::string &path, const Snapshot &s)
{
	std::string tmp = path + ".tmp";
	// Whatever is left at the temporary name (a crashed writer's file, or
	// a link that would have root write through it) goes first, and the
	// file is created anew, never opened through a link.
	if (unlink(tmp.c_str()) < 0 && errno != ENOENT)
		throw std::system_error(errno, std::generic_category(), "cannot remove " + tmp);
	int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		throw std::system_error(errno, std::generic_category(), "cannot create " + tmp);
	int err = 0;
	write_exposition(s, [&](std::string_view piece) {
		while (!err && !piece.empty()) {
			ssize_t n = write(fd, piece.data(), piece.size());
			if (n < 0 && errno != EINTR)
				err = errno;
			else if (n > 0)
				piece.remove_prefix(static_cast<std::size_t>(n));
		}
	});
	if (err) {
		close(fd);
		unlink(tmp.c_str());
		throw std::system_error(err, std::generic_category(), "cannot write " + tmp);
	}
	if (close(fd) < 0 || rename(tmp.c_str(), path.c_str()) < 0) {
		int e = errno;
		unlink(tmp.c_str());
		throw std::system_error(e, std::generic_category(), "cannot replace " + path);
	}
}

Textfile::~Textfile()
{
	if (written_)
		unlink(path_.c_str());
}

void Textfile::write(const Snapshot &s)
{
	write_textfile(path_, s);
	written_ = true;
}

namespace {

// gzip of a stream, fed piece by piece (zlib's deflate with a gzip header).
class Gzip {
public:
	Gzip()
	{
		// Level 1: the exposition repeats itself line after line, and
		// compresses 10:1 at the fastest level already.
		if (deflateInit2(&z_, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			throw std::bad_alloc();
	}
	~Gzip() { deflateEnd(&z_); }
	Gzip(const Gzip &) = delete;
	Gzip &operator=(const Gzip &) = delete;

	// Compress @in (all of it with @finish), handing full output to @out.
	template <typename Out>
	void feed(std::string_view in, bool finish, Out out)
	{
		z_.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(in.data()));
		z_.avail_in = static_cast<uInt>(in.size());
		int rc;
		do {
			z_.next_out = reinterpret_cast<Bytef *>(buf_.data());
			z_.avail_out = static_cast<uInt>(buf_.size());
			rc = deflate(&z_, finish ? Z_FINISH : Z_NO_FLUSH);
			std::size_t n = buf_.size() - z_.avail_out;
			if (n)
				out(std::string_view(buf_.data(), n));
		} while (z_.avail_out == 0 || (finish && rc != Z_STREAM_END));
	}

private:
	z_stream z_{};
	std::vector<char> buf_ = std::vector<char>(kExpositionPiece);
};

class Handler final : public CivetHandler {
public:
	explicit Handler(const Store &store) : store_(store) {}

	bool handleGet(CivetServer *, mg_connection *conn) override
	{
		scrapes_++;
		std::shared_ptr<const Snapshot> snap = store_.snapshot();
		const char *accept = mg_get_header(conn, "Accept-Encoding");
		const bool gzip = accept && std::string_view(accept).find("gzip") != std::string_view::npos;
		mg_response_header_start(conn, 200);
		mg_response_header_add(conn, "Content-Type", "text/plain; version=0.0.4; charset=utf-8",
				       -1);
		if (gzip)
			mg_response_header_add(conn, "Content-Encoding", "gzip", -1);
		mg_response_header_add(conn, "Transfer-Encoding", "chunked", -1);
		mg_response_header_send(conn);
		// A client that went away: the rest of the text is not written.
		bool gone = false;
		auto send = [&](std::string_view chunk) {
			if (!gone && mg_send_chunk(conn, chunk.data(),
						   static_cast<unsigned>(chunk.size())) < 0)
				gone = true;
		};
		try {
			if (gzip) {
				Gzip z;
				write_exposition(*snap, [&](std::string_view piece) {
					if (!gone)
						z.feed(piece, false, send);
				});
				z.feed({}, true, send);
			} else {
				write_exposition(*snap, send);
			}
		} catch (const std::exception &) {
			// No memory for zlib: the reply ends here, short.
			gone = true;
		}
		if (!gone)
			mg_send_chunk(conn, "", 0);
		return true;
	}

	std::atomic<std::uint64_t> scrapes_{0};

private:
	const Store &store_;
};

}  // namespace

struct MetricsServer::Impl {
	explicit Impl(const Store &store) : handler(store) {}
	Handler handler;
	std::unique_ptr<CivetServer> server;
};

MetricsServer::MetricsServer(const std::string &listen, const Store &store)
	: impl_(std::make_unique<Impl>(store))
{
	try {
		// A worker thread serves one connection at a time, and a client
		// that sends a byte a second never times out (the timeout is per
		// read): threads enough for a scrape to find one free behind 64
		// slow clients, as idle threads cost no CPU.
		impl_->server = std::make_unique<CivetServer>(std::vector<std::string>{
			"listening_ports", listen, "num_threads", std::to_string(kMetricsThreads),
			"request_timeout_ms", "10000", "enable_keep_alive", "yes"});
	} catch (const CivetException &e) {
		throw std::runtime_error(e.what());
	}
	impl_->server->addHandler("/metrics", impl_->handler);
}

MetricsServer::~MetricsServer()
{
	// Stop the threads before the handler they call goes.
	if (impl_)
		impl_->server.reset();
}

std::uint64_t MetricsServer::take_scrapes()
{
	return impl_->handler.scrapes_.exchange(0);
}

int MetricsServer::port() const
{
	auto ports = impl_->server->getListeningPorts();
	return ports.empty() ? 0 : ports.front();
}

}  // namespace ppctld
