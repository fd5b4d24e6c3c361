package io.rdmx.transport.stream;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.rdmx.spi.Platform;
import java.util.concurrent.ThreadFactory;

/** Names a provider's I/O threads and pins each, when it starts, through {@link Platform#hooks()}. */
public final class BindingThreadFactory implements ThreadFactory {
    private final DefaultThreadFactory names;
    private final String fabric;
    private final String address;

    /**
     * @param prefix thread name prefix
     * @param fabric provider name
     * @param address the address the node binds to (locates the NIC)
     */
    public BindingThreadFactory(String prefix, String fabric, String address) {
        this.names = new DefaultThreadFactory(prefix, true);
        this.fabric = fabric;
        this.address = address;
    }

    @Override
    public Thread newThread(Runnable r) {
        return names.newThread(() -> {
            Platform.hooks().bindCurrentThread("io", fabric, address);
            r.run();
        });
    }
}
