console.log('tiny')
