// SPDX-License-Identifier: GPL-2.0
#include "daemon.h"

int main(int argc, char **argv)
{
	return ppctld::main(argc, argv);
}
