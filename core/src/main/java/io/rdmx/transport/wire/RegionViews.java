package io.rdmx.transport.wire;

import io.rdmx.transport.internal.RegionImpl;
import java.nio.ByteBuffer;

/**
 * Views of region memory kept for the last two regions used (a channel's ring region and its control region),
 * so that placing or sending a frame allocates nothing. One thread at a time (the owner's lock or event loop).
 */
public final class RegionViews {
    private RegionImpl region0;
    private ByteBuffer view0;
    private RegionImpl region1;
    private ByteBuffer view1;
    private int next;

    /**
     * @param r a region
     * @return a view of its memory, cleared (position 0, limit its capacity)
     */
    public ByteBuffer view(RegionImpl r) {
        if (r == region0) {
            return view0.clear();
        }
        if (r == region1) {
            return view1.clear();
        }
        ByteBuffer v = r.memory().duplicate();
        if ((next++ & 1) == 0) {
            region0 = r;
            view0 = v;
        } else {
            region1 = r;
            view1 = v;
        }
        return v.clear();
    }
}
