// SPDX-License-Identifier: GPL-2.0
#include "ppkit/sim.h"

#include <algorithm>

#include <linux/ppsim.h>

#include <fmt/format.h>

#include "nl.h"
#include "ppkit/client.h"
#include "ppkit/error.h"
#include "ppsim_family.h"

namespace ppkit {

struct SimClient::Impl {
	nl::Socket sock;
	int family = 0;

	// Send @req; the devices in its replies, peers named.  Kernel errors
	// are worded for @op on @ifindex (0: no device named).
	std::vector<SimDevice> transact(nl::MsgPtr req, std::string_view op, std::uint32_t ifindex)
	{
		std::vector<SimDevice> out;
		nl::Reply r = sock.transact(std::move(req), [&](nl_msg *m) {
			out.push_back(wire::ppsim_parse_device(m));
		});
		if (r.err)
			throw sim_kernel_error(r.err, std::move(r.extack), op, ifindex);
		for (SimDevice &d : out)
			if (d.peer_ifindex)
				d.peer_ifname = ifname(*d.peer_ifindex);
		return out;
	}

	SimDevice one(nl::MsgPtr req, std::string_view op, std::uint32_t ifindex)
	{
		auto v = transact(std::move(req), op, ifindex);
		if (v.size() != 1)
			throw Error(Errc::Protocol,
				    fmt::format("ppsim {}: expected one device from the kernel, got {}",
						op, v.size()));
		return std::move(v.front());
	}
};

SimClient::SimClient() : impl_(std::make_unique<Impl>())
{
	impl_->family = impl_->sock.family(PPSIM_FAMILY_NAME);
	if (!impl_->family)
		throw sim_family_missing();
}

SimClient::~SimClient() = default;
SimClient::SimClient(SimClient &&) noexcept = default;
SimClient &SimClient::operator=(SimClient &&) noexcept = default;

std::vector<SimDevice> SimClient::devices()
{
	auto v = impl_->transact(wire::ppsim_dev_get(impl_->family, std::nullopt), "dev-get", 0);
	std::sort(v.begin(), v.end(),
		  [](const SimDevice &a, const SimDevice &b) { return a.ifindex < b.ifindex; });
	return v;
}

SimDevice SimClient::device(std::uint32_t ifindex)
{
	return impl_->one(wire::ppsim_dev_get(impl_->family, ifindex), "dev-get", ifindex);
}

std::vector<SimDevice> SimClient::create(const SimNewDevice &d)
{
	auto made = impl_->transact(wire::ppsim_dev_new(impl_->family, d), "dev-new", 0);
	if (made.empty())
		throw Error(Errc::Protocol, "ppsim dev-new: the kernel created no device it told of");
	// A pair may be told of by its first port alone: ask for the second.
	if (d.pair && made.size() == 1 && made.front().peer_ifindex)
		made.push_back(device(*made.front().peer_ifindex));
	return made;
}

void SimClient::remove(std::uint32_t ifindex)
{
	impl_->transact(wire::ppsim_dev_del(impl_->family, ifindex), "dev-del", ifindex);
}

SimDevice SimClient::set(std::uint32_t ifindex, const SimSettings &s)
{
	impl_->transact(wire::ppsim_dev_set(impl_->family, ifindex, s), "dev-set", ifindex);
	return device(ifindex);
}

SimDevice SimClient::gen_start(std::uint32_t ifindex, const SimGenParams &p)
{
	impl_->transact(wire::ppsim_gen_start(impl_->family, ifindex, p), "gen-start", ifindex);
	return device(ifindex);
}

SimDevice SimClient::gen_stop(std::uint32_t ifindex)
{
	impl_->transact(wire::ppsim_gen_stop(impl_->family, ifindex), "gen-stop", ifindex);
	return device(ifindex);
}

}  // namespace ppkit
