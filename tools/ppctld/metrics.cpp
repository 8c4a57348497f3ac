// SPDX-License-Identifier: GPL-2.0
#include "metrics.h"

#include <cerrno>
#include <cstdio>
#include <sstream>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

#include <prometheus/text_serializer.h>

namespace ppctld {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

// What every value series of a pool carries: enough to name it and join
// ppkit_pool_info, nothing that repeats the description on each of them.
std::vector<ClientMetric::Label> id_labels(const ppkit::Pool &p)
{
	return {
		{"pool", std::to_string(p.id)},
		{"source", std::string(ppkit::to_string(p.source))},
	};
}

// The description, once per pool, on ppkit_pool_info.
std::vector<ClientMetric::Label> info_labels(const ppkit::Pool &p)
{
	auto l = id_labels(p);
	l.insert(l.end(), {
		{"owner", p.owner},
		{"ifindex", p.ifindex ? std::to_string(*p.ifindex) : std::string()},
		{"device", p.ifname},
		{"queue", p.queue ? std::to_string(*p.queue) : std::string()},
		{"state", std::string(p.state())},
	});
	return l;
}

// Series a ppkit pool does not export because they follow from others
// (Documentation/stats.rst): alloc_fast is served minus the other
// allocation counters, the ring level is recycle_ring - ring_consumed.  The
// netdev family's pools count alloc_fast themselves and have no ring gauge.
bool derived(ppkit::Source src, ppkit::Counter c)
{
	return src == ppkit::Source::Ppkit &&
	       (c == ppkit::Counter::AllocFast || c == ppkit::Counter::RingPages);
}

MetricFamily family(std::string name, std::string help, MetricType type)
{
	MetricFamily f;
	f.name = std::move(name);
	f.help = std::move(help);
	f.type = type;
	return f;
}

void add(MetricFamily &f, std::vector<ClientMetric::Label> labels, double v)
{
	ClientMetric m;
	m.label = std::move(labels);
	if (f.type == MetricType::Counter)
		m.counter.value = v;
	else
		m.gauge.value = v;
	f.metric.push_back(std::move(m));
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
	default: return "ppkit page counter; see Documentation/stats.rst.";
	}
}

}  // namespace

std::vector<MetricFamily> metric_families(const Snapshot &s)
{
	std::vector<MetricFamily> out;

	// One family per counter, then the gauges, in uapi order.
	std::vector<MetricFamily> counters;
	for (std::size_t i = 0; i < ppkit::kCounterCount; i++) {
		auto c = static_cast<ppkit::Counter>(i);
		std::string n(ppkit::name(c));
		if (!ppkit::is_gauge(i))
			counters.push_back(family("ppkit_pool_" + n + "_total", counter_help(c),
						  MetricType::Counter));
		else
			counters.push_back(family("ppkit_pool_" + n, "ppkit pool level; see Documentation/stats.rst.",
						  MetricType::Gauge));
	}
	// The byte gauge says so in its name.
	counters[ppkit::index(ppkit::Counter::InflightMem)].name = "ppkit_pool_inflight_bytes";
	counters[ppkit::index(ppkit::Counter::Inflight)].name = "ppkit_pool_inflight_pages";

	auto info = family("ppkit_pool_info",
			   "1 for each pool, with its description: owner, device, queue, state.",
			   MetricType::Gauge);
	auto hit = family("ppkit_pool_alloc_hit_ratio",
			  "Pages served from recycled stock / all pages served, over the last sample interval.",
			  MetricType::Gauge);
	auto rec = family("ppkit_pool_recycle_ratio",
			  "Pages recycled / pages that left the driver, over the last sample interval.",
			  MetricType::Gauge);
	auto alert = family("ppkit_pool_alert",
			    "1 while an alert rule fires for the pool (rule: low-hit-rate, leak-suspect).",
			    MetricType::Gauge);

	const std::size_t inflight = ppkit::index(ppkit::Counter::Inflight);
	const std::size_t inflight_mem = ppkit::index(ppkit::Counter::InflightMem);
	for (const Row &r : s.rows) {
		add(info, info_labels(r.pool), 1);
		auto labels = id_labels(r.pool);
		for (std::size_t i = 0; i < ppkit::kCounterCount; i++) {
			auto c = static_cast<ppkit::Counter>(i);
			if (!r.stats.present.test(i) || derived(r.pool.source, c))
				continue;
			// A counter appears with its first event: of 1,000 idle
			// pools' 26 counters most are 0 for their whole life.
			if (!ppkit::is_gauge(i) && r.stats.values[i] == 0)
				continue;
			add(counters[i], labels, static_cast<double>(r.stats.values[i]));
		}
		// Without page_pool statistics (CONFIG_PAGE_POOL_STATS=n) the
		// netdev family still reports a pool's pages in flight.
		if (!r.stats.present.test(inflight) && r.pool.inflight)
			add(counters[inflight], labels, static_cast<double>(*r.pool.inflight));
		if (!r.stats.present.test(inflight_mem) && r.pool.inflight_mem)
			add(counters[inflight_mem], labels, static_cast<double>(*r.pool.inflight_mem));
		if (r.hit)
			add(hit, labels, *r.hit);
		if (r.recycle)
			add(rec, labels, *r.recycle);
		auto l = labels;
		l.push_back({"rule", "low-hit-rate"});
		add(alert, l, r.low_hit ? 1 : 0);
		l.back().value = "leak-suspect";
		add(alert, std::move(l), r.leak ? 1 : 0);
	}
	out.push_back(std::move(info));
	for (MetricFamily &f : counters)
		out.push_back(std::move(f));
	out.push_back(std::move(hit));
	out.push_back(std::move(rec));
	out.push_back(std::move(alert));

	auto up = family("ppctld_backend_up", "1 when the source's netlink family is there.",
			 MetricType::Gauge);
	auto pools = family("ppctld_pools", "Live pools followed, by source.", MetricType::Gauge);
	for (const BackendState &b : s.backends) {
		std::string src(ppkit::to_string(b.source));
		add(up, {{"source", src}}, b.up ? 1 : 0);
		double n = 0;
		for (const Row &r : s.rows)
			n += r.pool.source == b.source;
		add(pools, {{"source", src}}, n);
	}
	out.push_back(std::move(up));
	out.push_back(std::move(pools));

	auto one = [&](std::string name, std::string help, MetricType t, double v) {
		auto f = family(std::move(name), std::move(help), t);
		add(f, {}, v);
		out.push_back(std::move(f));
	};
	one("ppctld_samples_total", "Sampling rounds done.", MetricType::Counter,
	    static_cast<double>(s.samples));
	one("ppctld_sample_errors_total", "Sampling rounds in which a source failed.",
	    MetricType::Counter, static_cast<double>(s.sample_errors));
	one("ppctld_sample_duration_seconds", "How long the last sampling round took.",
	    MetricType::Gauge, s.last_sample_s);
	one("ppctld_history_bytes", "Memory held by the pools' histories.", MetricType::Gauge,
	    static_cast<double>(s.history_bytes));
	one("ppctld_alerts_raised_total", "Alerts raised since the daemon started.",
	    MetricType::Counter, static_cast<double>(s.alerts_raised));
	return out;
}

std::vector<MetricFamily> SnapshotCollector::Collect() const
{
	scrapes_++;
	return metric_families(*store_.snapshot());
}

std::string exposition(const Snapshot &s)
{
	std::ostringstream os;
	prometheus::TextSerializer().Serialize(os, metric_families(s));
	return os.str();
}

void write_textfile(const std::string &path, const Snapshot &s)
{
	std::string text = exposition(s);
	std::string tmp = path + ".tmp";
	int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		throw std::system_error(errno, std::generic_category(), "cannot create " + tmp);
	std::size_t off = 0;
	while (off < text.size()) {
		ssize_t n = write(fd, text.data() + off, text.size() - off);
		if (n < 0) {
			int e = errno;
			close(fd);
			unlink(tmp.c_str());
			throw std::system_error(e, std::generic_category(), "cannot write " + tmp);
		}
		off += static_cast<std::size_t>(n);
	}
	if (close(fd) < 0 || rename(tmp.c_str(), path.c_str()) < 0) {
		int e = errno;
		unlink(tmp.c_str());
		throw std::system_error(e, std::generic_category(), "cannot replace " + path);
	}
}

}  // namespace ppctld
