package etld.testenv;

import io.apicurio.common.apps.config.DynamicConfigPropertyList;
import java.util.List;
import javax.enterprise.context.ApplicationScoped;
import javax.enterprise.inject.Produces;

// Apicurio's config-index extension lists the registry's dynamic
// configuration properties at build time; its build half is not served, so
// the registry runs with no dynamic property (each keeps its static value).
@ApplicationScoped
public class DynamicConfigIndex {
	@Produces
	@ApplicationScoped
	DynamicConfigPropertyList properties() {
		return new DynamicConfigPropertyList(List.of());
	}
}
