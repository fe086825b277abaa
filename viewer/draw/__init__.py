"""Drawing: the town, the conversation view, the inspection panel and the bars around them."""
