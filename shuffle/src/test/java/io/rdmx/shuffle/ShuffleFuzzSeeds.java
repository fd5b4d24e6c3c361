package io.rdmx.shuffle;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Writes the seed inputs of {@link ShuffleDecodeFuzzTest} with the serializers' own writers. Run by
 * {@code scripts/rdmx fuzz --seeds}, which sets {@code rdmx.fuzz.writeSeeds=true}.
 */
class ShuffleFuzzSeeds {
    private static final Path DIR = Path.of("src/test/resources/io/rdmx/shuffle/ShuffleDecodeFuzzTestInputs/decode");

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    @EnabledIfSystemProperty(named = "rdmx.fuzz.writeSeeds", matches = "true")
    void write() throws IOException {
        Files.createDirectories(DIR);
        Files.write(DIR.resolve("seed-int"), row(0, RowSerializer.INT, 42));
        Files.write(DIR.resolve("seed-long"), row(1, RowSerializer.LONG, -7L));
        Files.write(DIR.resolve("seed-double"), row(2, RowSerializer.DOUBLE, 0.5));
        Files.write(DIR.resolve("seed-longs"), row(3, RowSerializer.LONGS, new long[] {1, 2, 3}));
        Files.write(DIR.resolve("seed-bytes"), row(4, RowSerializer.BYTES, new byte[] {9, 8, 7}));
        ByteBuffer packed = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN);
        packed.put((byte) 5).putShort((short) 1).putShort((short) 0).putInt(100).put((byte) 1).putShort((short) 256);
        Files.write(DIR.resolve("seed-packed-record"), packed.array());
    }

    private static <T> byte[] row(int which, RowSerializer<T> ser, T row) {
        int size = ser.size(row);
        ByteBuffer b = ByteBuffer.allocate(7 + 4 + size).order(ByteOrder.LITTLE_ENDIAN);
        b.put((byte) which).putShort((short) 4).putInt(size);
        ByteBuffer payload = b.slice().order(ByteOrder.LITTLE_ENDIAN);
        ser.write(row, payload, 4);
        return b.array();
    }
}
