#include "metrics/registry.h"
