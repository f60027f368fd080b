/* errors.h — errors are values. 0 is success; a negative BLAB_E* code is an
 * error, with a message kept per thread of work in a struct blab_err. */
#ifndef BTRFSLAB_ERRORS_H
#define BTRFSLAB_ERRORS_H

enum blab_errno {
	BLAB_OK = 0,
	BLAB_EINVAL = -1,   /* an argument is not valid */
	BLAB_ENOMEM = -2,   /* out of memory */
	BLAB_EIO = -3,      /* reading or writing the device failed */
	BLAB_ECORRUPT = -4, /* on-disk structure is corrupt */
	BLAB_ENOSPC = -5,   /* no space left in the filesystem or device */
	BLAB_ENOENT = -6,   /* no such file, directory or item */
	BLAB_EEXIST = -7,   /* the name or item exists already */
	BLAB_ENOTSUP = -8,  /* a feature this core does not handle */
	BLAB_ETOOSMALL = -9, /* the device is too small for a filesystem */
	BLAB_ENOTDIR = -10,
	BLAB_EISDIR = -11,
	BLAB_ENOTEMPTY = -12,
	BLAB_ENAMETOOLONG = -13,
	BLAB_EOVERFLOW = -14, /* an item does not fit where it must */
	BLAB_EBUSY = -15,     /* a device is in use */
	BLAB_EPARSE = -16,    /* a scenario line cannot be parsed */
	BLAB_EDEADLK = -17,   /* simulated tasks wait for each other in a cycle */
	BLAB_EPERM = -18,     /* the operation is not permitted (deleting the default subvolume) */
	BLAB_EDQUOT = -19,    /* a qgroup's limit would be passed */
	BLAB_ERRNO_MIN = -19,
};

#define BLAB_ERRMSG_MAX 512

struct blab_err {
	int code;
	char msg[BLAB_ERRMSG_MAX];
};

/* Name of a code, e.g. "EINVAL". Never NULL. */
const char *blab_errname(int code);
/* Short description of a code. Never NULL. */
const char *blab_strerror(int code);
/* Records code and a printf-style message in err (err may be NULL) and
 * returns code, so that callers can write `return blab_fail(err, ...)`. */
int blab_fail(struct blab_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#endif
