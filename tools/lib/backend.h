// SPDX-License-Identifier: GPL-2.0
// libppkit internals: what each family (backend) provides to Client.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "ppkit/holders.h"
#include "ppkit/types.h"

namespace ppkit::detail {

// Whether a kernel's reply of -@err with @extack says that it does not
// know an attribute of the request (strict validation): a pp_backport
// older than the request's flags.
bool unknown_attribute(int err, std::string_view extack);

class Backend {
public:
	virtual ~Backend() = default;
	virtual Source source() const = 0;
	virtual std::vector<Pool> pools() = 0;
	virtual Pool pool(std::uint32_t id) = 0;
	// Nothing when the kernel keeps no statistics.
	virtual std::optional<std::vector<Stats>> stats(std::optional<std::uint32_t> ifindex) = 0;
	virtual std::optional<Stats> stats(std::uint32_t id) = 0;
	virtual bool has_stats() = 0;
	// Whether stats() asks for the lent pages' ages (families that have them).
	virtual void set_lent_ages(bool) {}
	virtual void set(std::uint32_t id, const PoolSettings &s) = 0;
	virtual Holders holders(std::uint32_t id) = 0;
};

std::unique_ptr<Backend> make_backend(Source source);
// Fill Pool::ifname from Pool::ifindex.
void resolve_ifnames(std::vector<Pool> &pools);

}  // namespace ppkit::detail
