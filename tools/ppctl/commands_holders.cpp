// SPDX-License-Identifier: GPL-2.0
#include <algorithm>
#include <ostream>

#include "commands.h"
#include "ppkit/client.h"
#include "render_holders.h"

namespace ppctl {

int cmd_holders(const Options &o, std::ostream &out, std::ostream &)
{
	ppkit::Client c(ppkit::Source::Ppkit);
	std::optional<std::uint32_t> ifindex;
	if (!o.dev.empty())
		ifindex = ifindex_of(o.dev);

	std::vector<ppkit::Pool> pools;
	if (o.ids.empty()) {
		pools = c.pools();
	} else {
		for (std::uint32_t id : o.ids)
			pools.push_back(c.pool(id));
	}
	std::vector<PoolHolders> v;
	for (auto &p : pools) {
		if (ifindex && p.ifindex != ifindex)
			continue;
		try {
			ppkit::Holders h = c.holders(p.id);
			ppkit::name_holders(h);
			v.push_back({std::move(p), std::move(h)});
		} catch (const ppkit::Error &e) {
			// Gone since the list: its pages all came back.
			if (e.code() != ppkit::Errc::NoSuchPool || !o.ids.empty())
				throw;
		}
	}
	if (o.json) {
		out << holders_doc(v).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
		    << "\n";
		return kExitOk;
	}
	if (v.empty()) {
		out << "no pools\n";
		return kExitOk;
	}
	out << holders_text(v, render_options(o, false));
	return kExitOk;
}

}  // namespace ppctl
