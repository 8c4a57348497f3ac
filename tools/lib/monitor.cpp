// SPDX-License-Identifier: GPL-2.0
#include <ctime>

#include <linux/ppkit.h>
#include <netlink/socket.h>

#include "backend.h"
#include "netdev_family.h"
#include "nl.h"
#include "ppkit/client.h"
#include "ppkit_family.h"

namespace ppkit {

struct Monitor::Impl {
	Source source;
	nl::Socket sock;
	Monitor::Buffer buffer;
};

Monitor::Monitor(Source source) : impl_(std::make_unique<Impl>(Impl{source, nl::Socket(), {}}))
{
	nl::Socket &s = impl_->sock;
	const char *family = source == Source::Ppkit ? PPKIT_FAMILY_NAME : wire::netdev::kFamily;
	const char *group = source == Source::Ppkit ? PPKIT_MCGRP_MGMT : wire::netdev::kGroupPagePool;
	if (!s.family(family))
		throw family_missing(source);
	int id = s.group(family, group);
	// A burst of pool creations (a driver bringing up many queues) must not
	// overrun us: give the socket room, past rmem_max when we may.
	nl::ReceiveBuffer b = nl::set_receive_buffer(s.fd(), kBuffer);
	impl_->buffer = {b.bytes, b.forced};
	s.join(id);
}

Monitor::~Monitor() = default;
Monitor::Monitor(Monitor &&) noexcept = default;
Monitor &Monitor::operator=(Monitor &&) noexcept = default;

Source Monitor::source() const
{
	return impl_->source;
}

Monitor::Buffer Monitor::buffer() const
{
	return impl_->buffer;
}

int Monitor::fd() const
{
	return impl_->sock.fd();
}

std::vector<Event> Monitor::read(bool *lost)
{
	std::vector<Event> events;
	const Source source = impl_->source;
	const std::int64_t off = source == Source::Netdev ? boot_to_realtime_ns() : 0;
	timespec ts{};

	bool ok = impl_->sock.receive([&](nl_msg *m) {
		std::uint8_t cmd = nl::genl_cmd(m);
		auto kind = source == Source::Ppkit ? wire::ppkit_event_kind(cmd)
						    : wire::netdev_event_kind(cmd);
		if (!kind)
			return;
		Event e;
		e.kind = *kind;
		e.pool = source == Source::Ppkit ? wire::ppkit_parse_pool(m)
						 : wire::netdev_parse_pool(m, off);
		clock_gettime(CLOCK_REALTIME, &ts);
		e.realtime_ns = static_cast<std::uint64_t>(ts.tv_sec) * 1000000000 +
				static_cast<std::uint64_t>(ts.tv_nsec);
		events.push_back(std::move(e));
	});
	if (lost)
		*lost = !ok;
	std::vector<Pool> pools;
	for (Event &e : events)
		pools.push_back(e.pool);
	detail::resolve_ifnames(pools);
	for (std::size_t i = 0; i < events.size(); i++)
		events[i].pool.ifname = std::move(pools[i].ifname);
	return events;
}

}  // namespace ppkit
