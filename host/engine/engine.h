/* The engine (engine.c): its devices opened and kept, for the drivers and
 * the scheduler; the public calls are tandem.h's tdm_engine_*. */
#ifndef TDM_ENGINE_ENGINE_H
#define TDM_ENGINE_ENGINE_H

#include "runtime/runtime.h"
#include "tandem.h"

/* Internal accessor for kernel drivers: the engine's i-th device, or NULL. */
tdm_device *tdm_engine_device(tdm_engine *engine, int i);

#endif
