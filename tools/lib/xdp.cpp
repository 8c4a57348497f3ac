// SPDX-License-Identifier: GPL-2.0
#include "ppkit/xdp.h"

#include <array>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include <linux/if_link.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>

#include "ppkit/client.h"
#include "ppkit/error.h"
#include "ppkit_xdp.skel.h"	// generated in the build tree (tools/lib/CMakeLists.txt)

namespace ppkit {

namespace {

constexpr std::array<std::string_view, 3> kBundled = {"drop", "pass", "tx"};

struct SkelDeleter {
	void operator()(ppkit_xdp *s) const noexcept { ppkit_xdp__destroy(s); }
};
struct ObjectDeleter {
	void operator()(bpf_object *o) const noexcept { bpf_object__close(o); }
};

// A file descriptor of ours.
class Fd {
public:
	explicit Fd(int fd) : fd_(fd) {}
	~Fd()
	{
		if (fd_ >= 0)
			close(fd_);
	}
	Fd(const Fd &) = delete;
	Fd &operator=(const Fd &) = delete;
	int get() const { return fd_; }

private:
	int fd_;
};

// libbpf's warnings, kept while one of our calls runs instead of printed:
// the kernel's extended-ack message and the verifier's log are in them.
class LibbpfLog {
public:
	LibbpfLog()
	{
		text_ = &buf_;
		old_ = libbpf_set_print(&LibbpfLog::print);
	}
	~LibbpfLog()
	{
		libbpf_set_print(old_);
		text_ = nullptr;
	}
	LibbpfLog(const LibbpfLog &) = delete;
	LibbpfLog &operator=(const LibbpfLog &) = delete;

	const std::string &text() const { return buf_; }

	// What the kernel said (libbpf logs the extack of a netlink error).
	std::string kernel_message() const
	{
		constexpr std::string_view tag = "Kernel error message: ";
		auto at = buf_.rfind(tag);
		if (at == std::string::npos)
			return {};
		auto start = at + tag.size();
		auto end = buf_.find('\n', start);
		return buf_.substr(start, end == std::string::npos ? end : end - start);
	}

private:
	static int print(libbpf_print_level level, const char *format, va_list ap)
	{
		if (level != LIBBPF_WARN || !text_)
			return 0;
		va_list copy;
		va_copy(copy, ap);
		int n = std::vsnprintf(nullptr, 0, format, copy);
		va_end(copy);
		if (n <= 0)
			return 0;
		std::string s(static_cast<std::size_t>(n) + 1, '\0');
		std::vsnprintf(s.data(), s.size(), format, ap);
		s.resize(static_cast<std::size_t>(n));
		text_->append(s);
		return n;
	}

	static inline thread_local std::string *text_ = nullptr;
	std::string buf_;
	libbpf_print_fn_t old_ = nullptr;
};

// strerror() that knows libbpf's own codes (LIBBPF_ERRNO__FORMAT, ...).
std::string libbpf_error(int err)
{
	char buf[128] = {};
	libbpf_strerror(err, buf, sizeof(buf));
	return buf;
}

std::string dev_name(std::uint32_t ifindex)
{
	std::string n = ifname(ifindex);
	return n.empty() ? fmt::format("interface {}", ifindex) : n;
}

std::uint32_t mode_flags(XdpMode mode)
{
	return mode == XdpMode::Generic ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
}

constexpr std::string_view kCaps = "needs CAP_NET_ADMIN and CAP_BPF (or CAP_SYS_ADMIN): run it as root";

// The error for a failed rtnetlink XDP request (-@err) on @ifindex.
Error link_error(int err, const LibbpfLog &log, std::string_view op, std::uint32_t ifindex,
		 XdpMode mode)
{
	err = std::abs(err);
	std::string dev = dev_name(ifindex);
	std::string extack = log.kernel_message();
	switch (err) {
	case EOPNOTSUPP:
		if (mode == XdpMode::Native)
			return Error(Errc::NotSupported,
				     fmt::format("{} has no native XDP", dev), err,
				     std::move(extack));
		break;
	case EPERM:
	case EACCES:
		return Error(Errc::Permission, fmt::format("{} {}", op, kCaps), err,
			     std::move(extack));
	case ENODEV:
		return Error(Errc::NoSuchDevice, fmt::format("{}: no such interface", dev), err,
			     std::move(extack));
	case EEXIST:
		// Native and generic cannot be attached at the same time.
		if (mode != XdpMode::Offload) {
			auto other = mode == XdpMode::Native ? XdpMode::Generic : XdpMode::Native;
			return Error(Errc::Kernel,
				     fmt::format("{} has a {} XDP program: detach it first", dev,
						 to_string(other)),
				     err, std::move(extack));
		}
		break;
	default:
		break;
	}
	return Error(Errc::Kernel,
		     fmt::format("{} {} on {}: {}", op, to_string(mode), dev, std::strerror(err)),
		     err, std::move(extack));
}

// The name of program @id, "" if we may not look (CAP_SYS_ADMIN) or it is gone.
std::string prog_name(std::uint32_t id)
{
	Fd fd(bpf_prog_get_fd_by_id(id));
	if (fd.get() < 0)
		return {};
	bpf_prog_info info{};
	std::uint32_t len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd.get(), &info, &len))
		return {};
	return info.name;
}

}  // namespace

std::string_view to_string(XdpMode m)
{
	switch (m) {
	case XdpMode::Native:
		return "native";
	case XdpMode::Generic:
		return "generic";
	case XdpMode::Offload:
		return "offload";
	}
	return "unknown";
}

std::optional<XdpMode> xdp_mode_from_string(std::string_view name)
{
	if (name == "native")
		return XdpMode::Native;
	if (name == "generic")
		return XdpMode::Generic;
	return std::nullopt;
}

std::string_view to_string(XdpBundled p)
{
	auto i = static_cast<std::size_t>(p);
	return i < kBundled.size() ? kBundled[i] : std::string_view("unknown");
}

std::optional<XdpBundled> xdp_bundled_from_string(std::string_view name)
{
	for (std::size_t i = 0; i < kBundled.size(); i++)
		if (kBundled[i] == name)
			return static_cast<XdpBundled>(i);
	return std::nullopt;
}

std::span<const std::string_view> xdp_bundled_names()
{
	return kBundled;
}

struct XdpProgram::Impl {
	std::unique_ptr<ppkit_xdp, SkelDeleter> skel;	// a bundled program
	std::unique_ptr<bpf_object, ObjectDeleter> file;	// or an object file
	bpf_object *obj = nullptr;
	bpf_program *prog = nullptr;
	bool loaded = false;
};

// xdp_attach's way into an XdpProgram.
struct XdpAccess {
	static XdpProgram::Impl &impl(XdpProgram &p) { return *p.impl_; }
};

XdpProgram::XdpProgram(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
XdpProgram::~XdpProgram() = default;
XdpProgram::XdpProgram(XdpProgram &&) noexcept = default;
XdpProgram &XdpProgram::operator=(XdpProgram &&) noexcept = default;

XdpProgram XdpProgram::bundled(XdpBundled p)
{
	LibbpfLog log;
	auto impl = std::make_unique<Impl>();
	impl->skel.reset(ppkit_xdp__open());
	if (!impl->skel)
		throw Error(Errc::System,
			    fmt::format("cannot open the bundled XDP programs: {}",
					std::strerror(errno)));
	impl->obj = impl->skel->obj;
	bpf_program *all[] = {impl->skel->progs.xdp_drop, impl->skel->progs.xdp_pass,
			      impl->skel->progs.xdp_tx};
	impl->prog = all[static_cast<std::size_t>(p)];
	for (bpf_program *other : all)
		if (other != impl->prog)
			bpf_program__set_autoload(other, false);
	return XdpProgram(std::move(impl));
}

XdpProgram XdpProgram::file(const std::string &path)
{
	LibbpfLog log;
	auto impl = std::make_unique<Impl>();
	impl->file.reset(bpf_object__open_file(path.c_str(), nullptr));
	if (!impl->file)
		throw Error(Errc::InvalidArgument,
			    fmt::format("cannot open {} as a BPF object: {}", path,
					libbpf_error(errno)),
			    errno);
	impl->obj = impl->file.get();
	bpf_program *p;
	bpf_object__for_each_program(p, impl->obj)
	{
		if (!impl->prog && bpf_program__type(p) == BPF_PROG_TYPE_XDP)
			impl->prog = p;
	}
	if (!impl->prog)
		throw Error(Errc::InvalidArgument,
			    fmt::format("{} has no XDP program (a function in SEC(\"xdp\"))", path));
	// Only the chosen one is loaded: the others may need what we do not set up.
	bpf_object__for_each_program(p, impl->obj)
	{
		if (p != impl->prog)
			bpf_program__set_autoload(p, false);
	}
	return XdpProgram(std::move(impl));
}

std::string XdpProgram::name() const
{
	return bpf_program__name(impl_->prog);
}

std::vector<std::string> XdpProgram::programs() const
{
	std::vector<std::string> v;
	bpf_program *p;
	bpf_object__for_each_program(p, impl_->obj)
	{
		v.emplace_back(bpf_program__name(p));
	}
	return v;
}

const bpf_program *XdpProgram::get() const
{
	return impl_->prog;
}

std::string_view XdpStatus::mode() const
{
	if (programs.empty())
		return "none";
	if (programs.size() > 1)
		return "multi";
	return to_string(programs.front().mode);
}

XdpAttached xdp_attach(std::uint32_t ifindex, XdpMode mode, XdpProgram &prog, bool replace)
{
	if (mode == XdpMode::Offload)
		throw Error(Errc::NotSupported,
			    "offload mode is not supported: attach in native or generic mode");
	LibbpfLog log;
	auto &p = XdpAccess::impl(prog);
	if (!p.loaded) {
		int err = bpf_object__load(p.obj);
		if (err) {
			err = std::abs(err);
			// EACCES is the verifier's refusal, not a missing capability.
			if (err == EPERM)
				throw Error(Errc::Permission,
					    fmt::format("loading an XDP program {}", kCaps), err);
			// The verifier's reasons are in libbpf's log.
			std::string why = log.text();
			while (!why.empty() && why.back() == '\n')
				why.pop_back();
			throw Error(Errc::Kernel,
				    fmt::format("the kernel refused to load {}: {}; libbpf and the "
						"verifier said:\n{}",
						prog.name(), libbpf_error(err), why),
				    err);
		}
		p.loaded = true;
	}
	int fd = bpf_program__fd(p.prog);
	// As ip link without -force: the kernel refuses (EBUSY) to replace a
	// program unless asked to.
	const std::uint32_t flags = mode_flags(mode) | (replace ? 0 : XDP_FLAGS_UPDATE_IF_NOEXIST);
	int err = bpf_xdp_attach(static_cast<int>(ifindex), fd, flags, nullptr);
	if (std::abs(err) == EBUSY && !replace)
		throw Error(Errc::Kernel,
			    fmt::format("{} already has a {} XDP program, which is replaced only "
					"when asked to",
					dev_name(ifindex), to_string(mode)),
			    EBUSY, log.kernel_message());
	if (err)
		throw link_error(err, log, "attaching XDP", ifindex, mode);

	XdpAttached a;
	a.mode = mode;
	a.prog_name = prog.name();
	bpf_prog_info info{};
	std::uint32_t len = sizeof(info);
	if (!bpf_obj_get_info_by_fd(fd, &info, &len))
		a.prog_id = info.id;
	return a;
}

void xdp_detach(std::uint32_t ifindex, XdpMode mode)
{
	LibbpfLog log;
	int err = bpf_xdp_detach(static_cast<int>(ifindex), mode_flags(mode), nullptr);
	if (err)
		throw link_error(err, log, "detaching XDP", ifindex, mode);
}

XdpStatus xdp_status(std::uint32_t ifindex)
{
	LibbpfLog log;
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int err = bpf_xdp_query(static_cast<int>(ifindex), 0, &q);
	if (err)
		throw link_error(err, log, "reading XDP", ifindex, XdpMode::Generic);

	// Kernels report the id of each mode; a single mode's id is also in prog_id.
	if (q.attach_mode == XDP_ATTACHED_DRV && !q.drv_prog_id)
		q.drv_prog_id = q.prog_id;
	if (q.attach_mode == XDP_ATTACHED_SKB && !q.skb_prog_id)
		q.skb_prog_id = q.prog_id;
	if (q.attach_mode == XDP_ATTACHED_HW && !q.hw_prog_id)
		q.hw_prog_id = q.prog_id;

	XdpStatus st;
	st.ifindex = ifindex;
	st.ifname = ifname(ifindex);
	for (auto [mode, id] : {std::pair{XdpMode::Native, q.drv_prog_id},
				std::pair{XdpMode::Generic, q.skb_prog_id},
				std::pair{XdpMode::Offload, q.hw_prog_id}})
		if (id)
			st.programs.push_back({mode, id, prog_name(id)});
	return st;
}

}  // namespace ppkit
