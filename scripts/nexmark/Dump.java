// Dump prints the reference Nexmark generator's first events, one line
// each, in the format sources/nexmark's reference test compares:
// id, type, event time (ms), then the type's fields that do not come from
// the reference's unseeded per-process texts (extra and url are left out;
// the extra's length is kept).
//
// The generator's own random is replaced by a SplittableRandom of the given
// seed: unseeded, the reference gives other events on every run.
import com.github.nexmark.flink.NexmarkConfiguration;
import com.github.nexmark.flink.generator.GeneratorConfig;
import com.github.nexmark.flink.generator.NexmarkGenerator;
import com.github.nexmark.flink.model.Auction;
import com.github.nexmark.flink.model.Bid;
import com.github.nexmark.flink.model.Event;
import com.github.nexmark.flink.model.Person;
import java.io.BufferedWriter;
import java.io.OutputStreamWriter;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

public class Dump {
  public static void main(String[] args) throws Exception {
    long events = Long.parseLong(args[0]);
    long seed = Long.parseLong(args[1]);
    long baseTime = Long.parseLong(args[2]);
    NexmarkConfiguration conf = new NexmarkConfiguration();
    GeneratorConfig gc = new GeneratorConfig(conf, baseTime, 0, events, -1, 0);
    NexmarkGenerator gen = new NexmarkGenerator(gc);
    Field f = NexmarkGenerator.class.getDeclaredField("random");
    f.setAccessible(true);
    f.set(gen, new SplittableRandom(seed));
    BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
    for (long id = 0; gen.hasNext(); id++) {
      NexmarkGenerator.NextEvent ne = gen.nextEvent();
      Event e = ne.event;
      StringBuilder sb = new StringBuilder();
      sb.append(id).append('\t').append(e.type.value).append('\t').append(ne.eventTimestamp);
      if (e.type == Event.Type.PERSON) {
        Person p = e.newPerson;
        sb.append('\t').append(p.id).append('\t').append(p.name).append('\t').append(p.emailAddress)
            .append('\t').append(p.creditCard).append('\t').append(p.city).append('\t').append(p.state)
            .append('\t').append(p.dateTime.toEpochMilli()).append('\t').append(p.extra.length());
      } else if (e.type == Event.Type.AUCTION) {
        Auction a = e.newAuction;
        sb.append('\t').append(a.id).append('\t').append(a.seller).append('\t').append(a.category)
            .append('\t').append(a.initialBid).append('\t').append(a.reserve)
            .append('\t').append(a.dateTime.toEpochMilli()).append('\t').append(a.expires.toEpochMilli())
            .append('\t').append(a.itemName).append('\t').append(a.description)
            .append('\t').append(a.extra.length());
      } else {
        Bid b = e.bid;
        sb.append('\t').append(b.auction).append('\t').append(b.bidder).append('\t').append(b.price)
            .append('\t').append(b.channel).append('\t').append(b.dateTime.toEpochMilli())
            .append('\t').append(b.extra.length());
      }
      out.write(sb.append('\n').toString());
    }
    out.flush();
  }
}
