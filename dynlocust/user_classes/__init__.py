"""The public Locust user classes: `DynamoDBUser` (boto3), `FastDynamoDBUser` (the fast signed transport),
`MapperUser` (the mapper) and the scenario's own user, with the locustfile `dynlocust run` points Locust at.

They sit above `plugin`: defining a dynlocust user registers the plugin's listeners on Locust.
"""
