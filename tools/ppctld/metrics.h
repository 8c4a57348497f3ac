// SPDX-License-Identifier: GPL-2.0
// ppctld: the Prometheus view of a snapshot (Documentation/ppctld.rst lists
// every metric).  Built at scrape time from the store's last published
// snapshot, so one scrape shows one sampling instant.
#pragma once

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

private:
	const Store &store_;
};

// The text exposition of @s.
std::string exposition(const Snapshot &s);

// Write @s in the node_exporter textfile format to @path, atomically (a
// temporary file in the same directory, renamed).  Throws
// std::system_error on failure.
void write_textfile(const std::string &path, const Snapshot &s);

}  // namespace ppctld
