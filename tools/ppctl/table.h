// SPDX-License-Identifier: GPL-2.0
// ppctl: aligned tables that fit the terminal.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ppctl {

struct Column {
	std::string header;
	bool right = true;	// numbers right-aligned, words left
	int drop = 0;		// 0: always shown; else the higher, the sooner dropped
	std::size_t min_width = 0;
	bool hidden = false;	// never shown (cells are still given)
};

class Table {
public:
	explicit Table(std::vector<Column> columns);

	// A row of as many cells as there are columns (missing ones are blank).
	void add(std::vector<std::string> row);
	std::size_t rows() const { return rows_.size(); }

	// The table in at most @width columns: columns that do not fit are left
	// out, the most droppable first; cells are separated by two spaces.
	std::string render(int width, bool header = true) const;
	// Which columns render(@width) keeps.
	std::vector<bool> visible(int width) const;
	// Each column's width: its header's, its min_width or its widest cell.
	std::vector<std::size_t> widths() const;

private:

	std::vector<Column> cols_;
	std::vector<std::vector<std::string>> rows_;
};

}  // namespace ppctl
