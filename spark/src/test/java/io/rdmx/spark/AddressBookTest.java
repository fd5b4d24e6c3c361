package io.rdmx.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AddressBookTest {
    @Test
    void registrationAndLookUpAreStrings() {
        AddressBook.Driver d = new AddressBook.Driver(null);
        assertEquals("", d.handle("L\n1"), "an executor that never registered");
        assertEquals("ok", d.handle("R\n1\nhost-a\nshm=/x\ntcp=1.2.3.4:5"));
        assertEquals("host-a\nshm=/x\ntcp=1.2.3.4:5", d.handle("L\n1"));
        assertEquals("host-a\nshm=/x\ntcp=1.2.3.4:5", d.lookup("1"));
        assertNull(d.lookup("2"));
        assertThrows(IllegalArgumentException.class, () -> d.handle("R\n1"));
    }
}
