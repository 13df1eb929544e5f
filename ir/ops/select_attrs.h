/* select_attrs.h — attribute indices of the data-dependent selections
 * (ir/ops/select.c), shared with their emitters (backend/c/emit_select.c).
 * Conventions in ir/op.h ("Attribute indices"). */
#ifndef GRAPHC_SELECT_ATTRS_H
#define GRAPHC_SELECT_ATTRS_H

enum { UNIQUE_AXIS, UNIQUE_SORTED, UNIQUE_COUNT };
enum { NMS_CENTER_POINT_BOX, NMS_COUNT };

#endif
