package io.rdmx.spark;

import java.io.IOException;
import java.nio.file.Path;

/** Creates the temporary file a block too large for memory is written to (Spark's temporary local block). */
@FunctionalInterface
public interface BlockSpill {
    /**
     * @return a new file (existing and empty, or not yet made) this fetcher may create, write and delete
     * @throws IOException if none can be made
     */
    Path create() throws IOException;
}
