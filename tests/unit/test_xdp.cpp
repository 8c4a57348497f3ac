// SPDX-License-Identifier: GPL-2.0
// The bundled XDP programs and object files: opened (parsed by libbpf, not
// loaded into the kernel), which needs no privilege.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include <bpf/libbpf.h>
#include <unistd.h>

#include "ppkit/error.h"
#include "ppkit/xdp.h"

using namespace ppkit;

TEST_CASE("the embedded skeleton opens, each program by name", "[xdp]")
{
	for (auto [which, name] : {std::pair{XdpBundled::Drop, "xdp_drop"},
				   std::pair{XdpBundled::Pass, "xdp_pass"},
				   std::pair{XdpBundled::Tx, "xdp_tx"}}) {
		XdpProgram p = XdpProgram::bundled(which);
		CHECK(p.name() == name);
		CHECK(bpf_program__type(p.get()) == BPF_PROG_TYPE_XDP);
		CHECK(p.programs() == std::vector<std::string>{"xdp_drop", "xdp_pass", "xdp_tx"});
		// Only the chosen one would be loaded.
		CHECK(bpf_program__autoload(p.get()));
	}
	// Moved, still one owner.
	XdpProgram a = XdpProgram::bundled(XdpBundled::Tx);
	XdpProgram b = std::move(a);
	CHECK(b.name() == "xdp_tx");
}

TEST_CASE("an object file: its first XDP program", "[xdp]")
{
	// The object the skeleton embeds, as ppctl xdp attach --prog FILE.o reads it.
	XdpProgram p = XdpProgram::file(PPKIT_XDP_OBJ);
	CHECK(p.name() == "xdp_drop");
	CHECK(bpf_program__type(p.get()) == BPF_PROG_TYPE_XDP);
	CHECK(p.programs().size() == 3);
}

TEST_CASE("a file that is no BPF object is refused", "[xdp]")
{
	char path[] = "/tmp/ppkit-xdp-test-XXXXXX.o";
	int fd = mkstemps(path, 2);
	REQUIRE(fd >= 0);
	REQUIRE(write(fd, "not an ELF file\n", 16) == 16);
	close(fd);
	try {
		XdpProgram::file(path);
		FAIL("a text file opened as a BPF object");
	} catch (const Error &e) {
		CHECK(e.code() == Errc::InvalidArgument);
		CHECK_THAT(e.what(), Catch::Contains("cannot open") && Catch::Contains("as a BPF object"));
	}
	unlink(path);
	CHECK_THROWS_AS(XdpProgram::file("/nonexistent/prog.o"), Error);
}
