// SPDX-License-Identifier: GPL-2.0
#include "table.h"

#include <algorithm>

namespace ppctl {

namespace {

constexpr std::size_t kGap = 2;

}  // namespace

Table::Table(std::vector<Column> columns) : cols_(std::move(columns)) {}

void Table::add(std::vector<std::string> row)
{
	row.resize(cols_.size());
	rows_.push_back(std::move(row));
}

std::vector<std::size_t> Table::widths() const
{
	std::vector<std::size_t> w(cols_.size());
	for (std::size_t c = 0; c < cols_.size(); c++) {
		w[c] = std::max(cols_[c].header.size(), cols_[c].min_width);
		for (const auto &r : rows_)
			w[c] = std::max(w[c], r[c].size());
	}
	return w;
}

std::vector<bool> Table::visible(int width) const
{
	const auto w = widths();
	std::vector<bool> keep(cols_.size());
	for (std::size_t c = 0; c < cols_.size(); c++)
		keep[c] = !cols_[c].hidden;
	auto total = [&] {
		std::size_t t = 0, n = 0;
		for (std::size_t c = 0; c < cols_.size(); c++)
			if (keep[c]) {
				t += w[c];
				n++;
			}
		return t + (n ? (n - 1) * kGap : 0);
	};
	while (total() > static_cast<std::size_t>(std::max(width, 1))) {
		// The most droppable column still shown; the rightmost among equals.
		int victim = -1;
		for (std::size_t c = 0; c < cols_.size(); c++)
			if (keep[c] && cols_[c].drop > 0 &&
			    (victim < 0 || cols_[c].drop >= cols_[static_cast<std::size_t>(victim)].drop))
				victim = static_cast<int>(c);
		if (victim < 0)
			break;
		keep[static_cast<std::size_t>(victim)] = false;
	}
	return keep;
}

std::string Table::render(int width, bool header) const
{
	const auto w = widths();
	const auto keep = visible(width);
	std::string out;
	auto line = [&](const std::vector<std::string> &cells) {
		std::string l;
		bool first = true;
		for (std::size_t c = 0; c < cols_.size(); c++) {
			if (!keep[c])
				continue;
			if (!first)
				l.append(kGap, ' ');
			first = false;
			const std::string &s = cells[c];
			std::size_t pad = w[c] > s.size() ? w[c] - s.size() : 0;
			if (cols_[c].right) {
				l.append(pad, ' ');
				l += s;
			} else {
				l += s;
				l.append(pad, ' ');
			}
		}
		while (!l.empty() && l.back() == ' ')
			l.pop_back();
		out += l;
		out += '\n';
	};
	if (header) {
		std::vector<std::string> h;
		for (const auto &c : cols_)
			h.push_back(c.header);
		line(h);
	}
	for (const auto &r : rows_)
		line(r);
	return out;
}

}  // namespace ppctl
