// SPDX-License-Identifier: GPL-2.0
// ppctld: the Prometheus view of a snapshot (Documentation/ppctld.rst lists
// every metric).  Built at scrape time from the store's last published
// snapshot, so one scrape shows one sampling instant.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "store.h"

namespace ppctld {

// Every metric family of @s.
std::vector<prometheus::MetricFamily> metric_families(const Snapshot &s);

class SnapshotCollector : public prometheus::Collectable {
public:
	explicit SnapshotCollector(const Store &store) : store_(store) {}
	std::vector<prometheus::MetricFamily> Collect() const override;
	// Scrapes served since the last call (the daemon trims its heap after
	// them: one exposition of 1,000 pools is megabytes of text).
	std::uint64_t take_scrapes() { return scrapes_.exchange(0); }

private:
	const Store &store_;
	mutable std::atomic<std::uint64_t> scrapes_{0};
};

// The text exposition of @s.
std::string exposition(const Snapshot &s);

// Write @s in the node_exporter textfile format to @path, atomically (a
// temporary file in the same directory, renamed).  Throws
// std::system_error on failure.
void write_textfile(const std::string &path, const Snapshot &s);

}  // namespace ppctld
