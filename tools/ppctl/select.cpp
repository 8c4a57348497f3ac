// SPDX-License-Identifier: GPL-2.0
#include "select.h"

#include <tuple>

#include "ppkit/rates.h"

namespace ppctl {

namespace {

constexpr std::pair<SortKey, std::string_view> kSortNames[] = {
	{SortKey::Id, "id"},	       {SortKey::Dev, "dev"},	     {SortKey::Owner, "owner"},
	{SortKey::State, "state"},     {SortKey::Inflight, "inflight"}, {SortKey::Served, "served"},
	{SortKey::Hit, "hit"},	       {SortKey::Recycle, "recycle"},
};

// Present before absent; then @less.
template <typename T, typename L>
std::optional<bool> present_first(const std::optional<T> &a, const std::optional<T> &b, L less)
{
	if (a.has_value() != b.has_value())
		return a.has_value();
	if (a && (less(*a, *b) || less(*b, *a)))
		return less(*a, *b);
	return std::nullopt;	// equal
}

}  // namespace

std::optional<SortKey> sort_key_by_name(std::string_view name)
{
	for (const auto &[k, n] : kSortNames)
		if (n == name)
			return k;
	return std::nullopt;
}

std::string_view to_string(SortKey k)
{
	for (const auto &[key, n] : kSortNames)
		if (key == k)
			return n;
	return "?";
}

bool PoolFilter::matches(const ppkit::Pool &p) const
{
	if (ifindex && p.ifindex != ifindex)
		return false;
	if (owner && p.owner != *owner)
		return false;
	if (detached && p.detached() != *detached)
		return false;
	return true;
}

bool sorts_before(const SortFields &a, const SortFields &b, SortKey k)
{
	const ppkit::Pool &pa = *a.pool, &pb = *b.pool;
	auto higher = [](double x, double y) { return x > y; };
	std::optional<bool> r;
	switch (k) {
	case SortKey::Id:
		break;
	case SortKey::Dev:
		r = present_first(pa.ifindex, pb.ifindex, std::less<>());
		break;
	case SortKey::Owner:
		r = present_first(pa.owner.empty() ? std::nullopt : std::optional(pa.owner),
				  pb.owner.empty() ? std::nullopt : std::optional(pb.owner),
				  std::less<>());
		break;
	case SortKey::State:	// live, then detached
		if (pa.detached() != pb.detached())
			r = !pa.detached();
		break;
	case SortKey::Inflight:
		r = present_first(a.inflight, b.inflight, higher);
		break;
	case SortKey::Served:
		r = present_first(a.served, b.served, higher);
		break;
	case SortKey::Hit:
		r = present_first(a.hit, b.hit, higher);
		break;
	case SortKey::Recycle:
		r = present_first(a.recycle, b.recycle, higher);
		break;
	}
	if (r)
		return *r;
	return std::tie(pa.source, pa.id) < std::tie(pb.source, pb.id);
}

SortFields fields_of(const ppkit::Pool &p)
{
	SortFields f;
	f.pool = &p;
	if (p.inflight)
		f.inflight = static_cast<double>(*p.inflight);
	return f;
}

SortFields fields_of(const ppkit::Sample &s)
{
	SortFields f;
	f.pool = &s.pool;
	auto inflight = s.stats.has(ppkit::Counter::Inflight) ? s.stats.opt(ppkit::Counter::Inflight)
							       : s.pool.inflight;
	if (inflight)
		f.inflight = static_cast<double>(*inflight);
	if (auto served = s.stats.served())
		f.served = static_cast<double>(*served);
	ppkit::Window w = ppkit::since_creation(s);
	f.hit = w.hit;
	f.recycle = w.recycle;
	return f;
}

}  // namespace ppctl
