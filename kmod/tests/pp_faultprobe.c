// SPDX-License-Identifier: GPL-2.0
/*
 * pp_faultprobe: makes one deliberate kernel bug on load, so that the lab
 * can show that its debug kernel catches that kind of bug and fails the run
 * (tests/lab/debug-detect.sh).  Never load it anywhere else.
 *
 *   insmod pp_faultprobe.ko bug=oob      a read one byte past a kmalloc()
 *                                        object (KASAN)
 *   insmod pp_faultprobe.ko bug=leak     a kmalloc() object nothing points to
 *                                        (kmemleak)
 *   insmod pp_faultprobe.ko bug=lockdep  two mutexes taken in both orders,
 *                                        one after the other (lockdep)
 *
 * The module stays loaded after a bug; without a known bug= it refuses to load.
 */

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/mutex.h>
#include <linux/string.h>

static char *bug = "";
module_param(bug, charp, 0444);
MODULE_PARM_DESC(bug, "the bug to make on load: oob, leak or lockdep");

#define FP_OBJ_BYTES	24

static DEFINE_MUTEX(fp_a);
static DEFINE_MUTEX(fp_b);

static noinline int fp_oob(void)
{
	char *p = kmalloc(FP_OBJ_BYTES, GFP_KERNEL);
	char c;

	if (!p)
		return -ENOMEM;
	memset(p, 0, FP_OBJ_BYTES);
	/* one past the end: inside the slab object's padding, outside the object */
	c = READ_ONCE(p[FP_OBJ_BYTES]);
	kfree(p);
	pr_info("pp_faultprobe: read %d one byte past a %d-byte object\n", c, FP_OBJ_BYTES);
	return 0;
}

/*
 * Several objects: a stale copy of the last pointer (a spilled register in
 * a cached kernel stack) can hide that one from kmemleak, not the others.
 */
#define FP_LEAKS	4

static noinline int fp_leak(void)
{
	char *p;
	int i;

	for (i = 0; i < FP_LEAKS; i++) {
		p = kmalloc(FP_OBJ_BYTES, GFP_KERNEL);
		if (!p)
			return -ENOMEM;
		/* written, then forgotten: nothing refers to it once this returns */
		memset(p, 0x5a, FP_OBJ_BYTES);
		WRITE_ONCE(p[0], 'L');
	}
	pr_info("pp_faultprobe: leaked %d objects of %d bytes\n", FP_LEAKS, FP_OBJ_BYTES);
	return 0;
}

static noinline void fp_lockdep(void)
{
	mutex_lock(&fp_a);
	mutex_lock(&fp_b);
	mutex_unlock(&fp_b);
	mutex_unlock(&fp_a);
	/* the other order: a deadlock if two threads ever did both at once */
	mutex_lock(&fp_b);
	mutex_lock(&fp_a);
	mutex_unlock(&fp_a);
	mutex_unlock(&fp_b);
	pr_info("pp_faultprobe: took two mutexes in both orders\n");
}

static int __init fp_init(void)
{
	if (!strcmp(bug, "oob"))
		return fp_oob();
	if (!strcmp(bug, "leak"))
		return fp_leak();
	if (!strcmp(bug, "lockdep")) {
		fp_lockdep();
		return 0;
	}
	pr_err("pp_faultprobe: bug='%s': give bug=oob, leak or lockdep\n", bug);
	return -EINVAL;
}

static void __exit fp_exit(void)
{
}

module_init(fp_init);
module_exit(fp_exit);
MODULE_DESCRIPTION("ppkit lab: one deliberate kernel bug, for the debug kernel to catch");
MODULE_LICENSE("GPL");
