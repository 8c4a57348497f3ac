// SPDX-License-Identifier: GPL-2.0
// ppctl: which pools list and stats show, and in what order (--dev,
// --owner, --state, --sort).  Pure functions of the data.
#pragma once

#include <algorithm>
#include <cstdint>
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

template <typename T, typename F>
void sort_rows_by(std::vector<T> &rows, SortKey k, F fields)
{
	std::stable_sort(rows.begin(), rows.end(), [&](const T &a, const T &b) {
		return sorts_before(fields(a), fields(b), k);
	});
}

// A pool's own fields (list).
SortFields fields_of(const ppkit::Pool &p);
// A sample: served and the rates since the pool's creation (stats).
SortFields fields_of(const ppkit::Sample &s);

}  // namespace ppctl
