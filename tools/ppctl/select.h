// SPDX-License-Identifier: GPL-2.0
// ppctl: which pools list and stats show, and in what order (--dev,
// --owner, --state, --sort).  Pure functions of the data.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ppkit/types.h"

namespace ppctl {

// --sort: names as on the command line.
enum class SortKey { Id, Dev, Owner, State, Inflight, Served, Hit, Recycle };
std::optional<SortKey> sort_key_by_name(std::string_view name);
std::string_view to_string(SortKey k);

// --dev, --owner, --state: a pool is shown when it matches all that are set.
struct PoolFilter {
	std::optional<std::uint32_t> ifindex;
	std::optional<std::string> owner;
	std::optional<bool> detached;	// --state detached (true), live (false)

	bool matches(const ppkit::Pool &p) const;
	bool any() const { return ifindex || owner || detached; }
};

// What a row is sorted by.
struct SortFields {
	const ppkit::Pool *pool = nullptr;	// id, ifindex, owner, state
	std::optional<double> inflight, served, hit, recycle;
};

// Names and the pool's state ascending (a pool without a device, or owner,
// last); figures highest first, rows without one last; ties by source and
// id.
bool sorts_before(const SortFields &a, const SortFields &b, SortKey k);

// Sorts @rows by @k, calling @fields once per row: sorting by comparing
// rows made about 2 n log n calls, and a sample's fields are its rates (with
// 1,000 pools, 40% of what `ppctl --json stats` executed).  Rows already in
// order are not moved.
template <typename T, typename F>
void sort_rows_by(std::vector<T> &rows, SortKey k, F fields)
{
	std::vector<SortFields> keys;
	keys.reserve(rows.size());
	for (const T &r : rows)
		keys.push_back(fields(r));
	std::vector<std::size_t> order(rows.size());
	std::iota(order.begin(), order.end(), std::size_t{0});
	auto before = [&](std::size_t a, std::size_t b) { return sorts_before(keys[a], keys[b], k); };
	if (std::is_sorted(order.begin(), order.end(), before))
		return;
	std::stable_sort(order.begin(), order.end(), before);
	std::vector<T> sorted;
	sorted.reserve(rows.size());
	for (std::size_t i : order)
		sorted.push_back(std::move(rows[i]));
	rows = std::move(sorted);
}

// A pool's own fields (list).
SortFields fields_of(const ppkit::Pool &p);
// A sample: served and the rates since the pool's creation (stats).
SortFields fields_of(const ppkit::Sample &s);

}  // namespace ppctl
