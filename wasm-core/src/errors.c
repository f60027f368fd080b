#include "errors.h"
#include <stdarg.h>
#include <stdio.h>

static const struct {
	const char *name;
	const char *text;
} table[] = {
	[0] = {"OK", "success"},
	[1] = {"EINVAL", "invalid argument"},
	[2] = {"ENOMEM", "out of memory"},
	[3] = {"EIO", "input/output error"},
	[4] = {"ECORRUPT", "corrupt filesystem structure"},
	[5] = {"ENOSPC", "no space left"},
	[6] = {"ENOENT", "no such file or item"},
	[7] = {"EEXIST", "already exists"},
	[8] = {"ENOTSUP", "not supported"},
	[9] = {"ETOOSMALL", "device too small"},
	[10] = {"ENOTDIR", "not a directory"},
	[11] = {"EISDIR", "is a directory"},
	[12] = {"ENOTEMPTY", "directory not empty"},
	[13] = {"ENAMETOOLONG", "name too long"},
	[14] = {"EOVERFLOW", "item does not fit"},
	[15] = {"EBUSY", "device or resource busy"},
	[16] = {"EPARSE", "cannot parse input"},
	[17] = {"EDEADLK", "deadlock"},
	[18] = {"EPERM", "operation not permitted"},
	[19] = {"EDQUOT", "disk quota exceeded"},
};

static int index_of(int code)
{
	int i = -code;
	return (i >= 0 && i < (int)(sizeof(table) / sizeof(table[0]))) ? i : -1;
}

const char *blab_errname(int code)
{
	int i = index_of(code);
	return i < 0 ? "EUNKNOWN" : table[i].name;
}

const char *blab_strerror(int code)
{
	int i = index_of(code);
	return i < 0 ? "unknown error" : table[i].text;
}

int blab_fail(struct blab_err *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		int n = snprintf(err->msg, sizeof(err->msg), "%s: ", blab_errname(code));
		if (n < 0 || n >= (int)sizeof(err->msg))
			n = 0;
		vsnprintf(err->msg + n, sizeof(err->msg) - (size_t)n, fmt, ap);
		va_end(ap);
		err->code = code;
	}
	return code;
}
