package workloads

// Human ceilings: the most one person does of a kind of operation in an hour of store
// time, held for the whole hour. A person's share of an operation's traffic is truncated
// at its ceiling (Activity): under Black Friday rates a plain Zipf over 20M users gives
// its first rank about 6% of every operation, hundreds of orders a second, which no
// person places; traffic like that from one identity is a bot, and bots are a population
// of their own (population.bots). The figures are upper bounds with a stated rationale,
// not averages; a scenario overrides any of them per operation in
// population.user_activity.max_per_hour.
const (
	// PacePage bounds page-driven operations (a product page, a listing, the session
	// read and touch each page makes, a page view recorded): one page every 3 seconds for
	// an hour. People spend 10 seconds and more on a page (J. Nielsen, "How Long Do Users
	// Stay on Web Pages?", NN/g 2011: the first 10 seconds decide whether they stay), and
	// a mobile product page takes a second or two to load; 3 seconds is a fast skimmer
	// who never stops.
	PacePage = 1200
	// PaceCartEdit bounds cart edits (add, change a quantity, remove): one every 15
	// seconds, the time to open a product, choose a variant and press the button.
	PaceCartEdit = 240
	// PaceAccount bounds account pages (order status, order history, the list of one's
	// sessions): one a minute, a person refreshing an order's status page.
	PaceAccount = 60
	// PaceCheckout bounds acts that take a flow of several pages: placing an order or
	// checking out a cart (address, delivery slot, payment and its 3-D Secure
	// confirmation: five minutes at the fastest), logging in or out, merging a guest cart
	// at login, abandoning a cart.
	PaceCheckout = 12
	// PaceOrderItems bounds per-item consequences of orders (a stock decrement per unit
	// line): four lines an order at the checkout ceiling.
	PaceOrderItems = 4 * PaceCheckout
	// PaceOrderStatus bounds status changes of a person's orders (paid, processing,
	// shipped: three an order, made by the store at most as fast as orders come).
	PaceOrderStatus = 3 * PaceCheckout
)
