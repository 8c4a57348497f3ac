// SPDX-License-Identifier: GPL-2.0
#include "history.h"

#include <algorithm>

namespace ppctld {

void History::push(const Point &p)
{
	if (points_.size() < capacity_) {
		// Grow by doubling up to the capacity, never past it.
		if (points_.size() == points_.capacity())
			points_.reserve(std::min(capacity_, std::max<std::size_t>(16, points_.size() * 2)));
		points_.push_back(p);
		return;
	}
	points_[head_] = p;
	head_ = (head_ + 1) % capacity_;
}

void History::set_capacity(std::size_t capacity)
{
	capacity = capacity ? capacity : 1;
	std::vector<Point> all = since(0);
	if (all.size() > capacity)
		all.erase(all.begin(), all.end() - static_cast<std::ptrdiff_t>(capacity));
	all.shrink_to_fit();
	points_ = std::move(all);
	head_ = 0;
	capacity_ = capacity;
}

std::vector<Point> History::since(std::uint32_t since_ds) const
{
	std::vector<Point> out;
	out.reserve(points_.size());
	for (std::size_t i = 0; i < points_.size(); i++) {
		const Point &p = points_[(head_ + i) % points_.size()];
		if (p.t_ds >= since_ds)
			out.push_back(p);
	}
	return out;
}

std::optional<Point> History::last() const
{
	if (points_.empty())
		return std::nullopt;
	return points_[(head_ + points_.size() - 1) % points_.size()];
}

}  // namespace ppctld
