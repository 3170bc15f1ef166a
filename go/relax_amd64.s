#include "textflag.h"

// func cpuRelax()
// PAUSE: tells the CPU this is a spin-wait loop (saves power, frees the
// sibling hyper-thread, avoids a memory-order mis-speculation on exit).
TEXT ·cpuRelax(SB), NOSPLIT|NOFRAME, $0-0
	PAUSE
	RET
