/* trace.h: `./train trace`: one input walked through every stage of the
 * network, for teaching. */
#ifndef TRACE_H
#define TRACE_H

#include "run/options.h"

int command_trace(const Options *o);

#endif
